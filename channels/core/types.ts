import type { Language } from "../../src/diagnosis/types.js";

export const PROVIDERS = ["twilio", "telegram", "africastalking"] as const;
export type Provider = (typeof PROVIDERS)[number];
export const CHANNEL_KINDS = ["whatsapp", "mms", "sms", "telegram", "ussd"] as const;
export type ChannelKind = (typeof CHANNEL_KINDS)[number];

export const isProvider = (value: string): value is Provider =>
  (PROVIDERS as readonly string[]).includes(value);
export const isChannelKind = (value: string): value is ChannelKind =>
  (CHANNEL_KINDS as readonly string[]).includes(value);

export type InboundMedia = { url: string; contentType: string } | { telegramFileId: string };

/** One provider webhook, normalized: the only shape the queue and the worker know. */
export interface InboundMessage {
  provider: Provider;
  channel: ChannelKind;
  /** The provider's own id (Twilio MessageSid, Telegram update_id, Africa's Talking id): the job's identity. */
  messageId: string;
  /** E.164 phone number, or the Telegram chat id. */
  from: string;
  to: string;
  text?: string;
  media?: InboundMedia;
  /** What the provider says about the user's language (Telegram's language_code). */
  languageHint?: string;
  /** A language picked on Telegram's inline keyboard. */
  languageChoice?: Language;
  /** Telegram callback query to acknowledge, so the button stops spinning. */
  callbackQueryId?: string;
  receivedAt: string;
}

/** A rendered reply: the text already fits the channel. */
export interface Reply {
  provider: Provider;
  channel: ChannelKind;
  to: string;
  /** Our number the user wrote to, so the answer comes from it; the configured sender otherwise. */
  from?: string;
  text: string;
  /** Telegram only: offer the inline keyboard to switch language. */
  languageKeyboard?: boolean;
}

/** Worker side of a provider: fetch what the user sent, send what we answer. */
export interface Adapter {
  provider: Provider;
  send(reply: Reply): Promise<void>;
  fetchMedia(media: InboundMedia): Promise<Buffer>;
  acknowledge?(callbackQueryId: string): Promise<void>;
}

/** A provider refused us for sending too fast: the queue pauses for `retryAfterMs` instead of failing. */
export class ProviderRateLimitError extends Error {
  constructor(
    readonly provider: Provider,
    readonly retryAfterMs: number,
  ) {
    super(`${provider} rate limit: retry after ${retryAfterMs} ms`);
    this.name = "ProviderRateLimitError";
  }
}

/** The media could not be fetched or is not ours to fetch: the user is asked to resend. */
export class MediaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MediaError";
  }
}

/** A job that cannot succeed on retry (no adapter for it, a number the provider refuses): failed at once, kept. */
export class PermanentJobError extends Error {
  override name = "PermanentJobError";
}
