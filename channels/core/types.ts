import type { Language } from "../../src/diagnosis/types.js";

/** A photo as the provider refers to it: its own reference (a media URL, a Telegram file id). */
export interface InboundMedia {
  ref: string;
  contentType?: string;
}

/** A button the farmer pressed: `id` to acknowledge it (when the provider wants that), `data` its action. */
export interface ButtonPress {
  id: string;
  data?: string;
}

/** One provider webhook, normalized by the provider's parser: the only shape the queue and the worker know. */
export interface InboundMessage {
  /** The provider's id (ChannelProvider.id): which adapter answers. */
  provider: string;
  /** The provider's name for the channel (whatsapp, mms, sms, telegram...): what the reply can show. */
  channel: string;
  /** The provider's own id (Twilio MessageSid, Telegram update_id, Africa's Talking id): the job's identity. */
  messageId: string;
  /** The farmer's address at the provider (E.164 number, chat id): where replies go. */
  from: string;
  /** Our address the farmer wrote to, so the answer comes from it. */
  to: string;
  /** The farmer key (ChannelProvider.farmerKey): language, last result and the order of replies hang on it. */
  owner: string;
  /** The farmer's phone number (E.164), when the provider knows it: first-contact language by country. */
  phone?: string;
  text?: string;
  media?: InboundMedia;
  /** What the provider says about the user's language (an IETF tag, e.g. Telegram's language_code). */
  languageHint?: string;
  button?: ButtonPress;
  /** The farmer opened the conversation (Telegram's /start): greet them. */
  start?: boolean;
  receivedAt: string;
}

/** A button under a reply: its label and the action it carries back (channels/core/actions.ts). */
export interface Button {
  text: string;
  data: string;
}

/** A rendered reply: the text already fits the channel. */
export interface Reply {
  provider: string;
  channel: string;
  to: string;
  /** Our number the user wrote to, so the answer comes from it; the configured sender otherwise. */
  from?: string;
  text: string;
  /** Rows of buttons; sent only on channels whose capabilities have `buttons`. */
  buttons?: Button[][];
}

/**
 * What a channel can show and how long a message may be: the renderer and the worker read this, never a
 * provider's name. `sms` text is plain and measured in billed segments; `chat` text in characters. (USSD is
 * answered in the webhook itself, with screens: render/ussd.ts.)
 */
export interface Capabilities {
  text:
    | { kind: "sms"; maxSegments: number }
    | { kind: "chat"; style: "html" | "asterisks"; maxChars: number };
  /** Inline buttons under a message. */
  buttons: boolean;
  /** A "typing" indicator while a photo is diagnosed (else a "photo received" notice when it takes long). */
  typing: boolean;
  /** Photos come in on this channel. */
  media: boolean;
  /**
   * Free-form messages reach the farmer only this long after their last message (WhatsApp: 24 hours); a
   * reply outside it waits for their next message (reply-window.ts).
   */
  replyWindowMs?: number;
}

/** Worker side of a provider: fetch what the user sent, send what we answer. */
export interface Adapter {
  provider: string;
  capabilities(channel: string): Capabilities;
  send(reply: Reply): Promise<void>;
  fetchMedia(media: InboundMedia): Promise<Buffer>;
  /** Stops a pressed button's spinner. */
  acknowledge?(press: ButtonPress): Promise<void>;
  /** Shows "typing" in the conversation (providers whose capabilities have `typing`). */
  showTyping?(to: string): Promise<void>;
  /**
   * Asks the farmer to write, by what the provider lets through outside the reply window (a WhatsApp
   * template); false when none is configured.
   */
  sendWindowNotice?(target: Pick<Reply, "channel" | "to" | "from">, language: Language): Promise<boolean>;
}

/** A provider refused us for sending too fast: the queue pauses for `retryAfterMs` instead of failing. */
export class ProviderRateLimitError extends Error {
  constructor(
    readonly provider: string,
    readonly retryAfterMs: number,
  ) {
    super(`${provider} rate limit: retry after ${retryAfterMs} ms`);
    this.name = "ProviderRateLimitError";
  }
}

/** The media could not be fetched or is not ours to fetch: the user is asked to resend. */
export class MediaError extends Error {
  /** Over what we download (or the provider serves): the farmer is told to send a lighter photo, not the same. */
  readonly tooLarge: boolean;
  constructor(message: string, options: { tooLarge?: boolean } = {}) {
    super(message);
    this.name = "MediaError";
    this.tooLarge = options.tooLarge ?? false;
  }
}

/** A job that cannot succeed on retry (no adapter for it, a number the provider refuses): failed at once, kept. */
export class PermanentJobError extends Error {
  override name = "PermanentJobError";
}
