import twilio from "twilio";
import type { TwilioConfig } from "../../src/config.js";
import { SMS_MAX_SEGMENTS } from "../../src/limits.js";
import { downloadMedia } from "../core/media.js";
import {
  type Adapter,
  type Capabilities,
  MediaError,
  PermanentJobError,
  ProviderRateLimitError,
  type Reply,
} from "../core/types.js";
import { CHAT_MESSAGE_CHARS, WHATSAPP_REPLY_WINDOW_MS } from "../limits.js";
import { TWILIO } from "./farmer.js";
import { TwilioHttpClient } from "./http-client.js";

// WhatsApp shows *bold* and takes long bodies; SMS and MMS replies go back as plain texts, billed by segment
// (the handset that sent a photo reads the answer as a text). No buttons: WhatsApp's need approved templates.
const CAPABILITIES: Record<string, Capabilities> = {
  whatsapp: {
    text: { kind: "chat", style: "asterisks", maxChars: CHAT_MESSAGE_CHARS.whatsapp },
    buttons: false,
    typing: false,
    media: true,
    replyWindowMs: WHATSAPP_REPLY_WINDOW_MS,
  },
  sms: { text: { kind: "sms", maxSegments: SMS_MAX_SEGMENTS }, buttons: false, typing: false, media: true },
};

function twilioCapabilities(channel: string): Capabilities {
  return CAPABILITIES[channel] ?? CAPABILITIES.sms!;
}

// Media URLs in a webhook point at Twilio's API, which redirects to its CDN. Anything else in MediaUrl0 is
// not Twilio's to serve: we must not send our account credentials there.
export function isTwilioMediaHost(url: URL): boolean {
  const host = url.hostname.toLowerCase();
  return (
    url.protocol === "https:" &&
    (host === "api.twilio.com" || host.endsWith(".twilio.com") || host.endsWith(".twiliocdn.com"))
  );
}

const address = (channel: Reply["channel"], number: string) => {
  const bare = number.replace(/^whatsapp:/, "");
  return channel === "whatsapp" ? `whatsapp:${bare}` : bare;
};

export interface TwilioAdapterDeps {
  config: TwilioConfig;
  /** TWILIO_API_ROOT: Twilio's API, or a stand-in; media on its host is fetched as Twilio's. */
  apiRoot: string;
  /** An API call abandoned after (PROVIDER_TIMEOUT_MS). */
  timeoutMs?: number;
}

export function createTwilioAdapter({ config, apiRoot, timeoutMs }: TwilioAdapterDeps): Adapter {
  const api = twilio(config.accountSid, config.authToken, {
    httpClient: new TwilioHttpClient(apiRoot, timeoutMs),
  });
  const authorization = `Basic ${Buffer.from(`${config.accountSid}:${config.authToken}`).toString("base64")}`;
  const apiOrigin = new URL(apiRoot).origin;

  async function create(
    target: Pick<Reply, "channel" | "to" | "from">,
    content: { body: string } | { contentSid: string },
  ) {
    const from = target.from ?? (target.channel === "whatsapp" ? config.whatsappFrom : config.smsFrom);
    if (!from) throw new PermanentJobError(`no Twilio sender configured for ${target.channel}`);
    try {
      await api.messages.create({
        from: address(target.channel, from),
        to: address(target.channel, target.to),
        ...content,
      });
    } catch (error) {
      throw classify(error);
    }
  }

  return {
    provider: TWILIO,
    capabilities: twilioCapabilities,
    send: (reply) => create(reply, { body: reply.text }),
    // Outside WhatsApp's window only an approved template goes through (TWILIO_WHATSAPP_NOTICE_SID).
    async sendWindowNotice(target, language) {
      const sid = config.whatsappNoticeSids[language] ?? config.whatsappNoticeSids["*"];
      if (target.channel !== "whatsapp" || !sid) return false;
      await create(target, { contentSid: sid });
      return true;
    },
    async fetchMedia(media) {
      const url = new URL(media.ref);
      if (!isTwilioMediaHost(url) && url.origin !== apiOrigin)
        throw new MediaError(`media host ${url.hostname} is not Twilio's`);
      return downloadMedia(media.ref, {
        headers: { authorization },
        label: "twilio media",
        provider: TWILIO,
      });
    },
  };
}

// A 429 (Twilio's 20429) arrives already classified; other 4xx will not get better by retrying.
function classify(error: unknown): unknown {
  if (error instanceof ProviderRateLimitError) return error;
  const status = (error as { status?: number }).status;
  const code = (error as { code?: number }).code;
  if (status !== undefined && status >= 400 && status < 500) {
    return new PermanentJobError(`twilio refused the message: ${status} ${code ?? ""}`.trim());
  }
  return error;
}
