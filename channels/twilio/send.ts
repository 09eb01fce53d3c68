import twilio from "twilio";
import type { TwilioConfig } from "../../src/config.js";
import { downloadMedia } from "../core/media.js";
import {
  type Adapter,
  type InboundMedia,
  MediaError,
  PermanentJobError,
  ProviderRateLimitError,
  type Reply,
} from "../core/types.js";

type TwilioClient = ReturnType<typeof twilio>;

// Media URLs in a webhook point at Twilio's API, which redirects to its CDN. Anything else in MediaUrl0 is
// not Twilio's to serve: we must not send our account credentials there.
export function isTwilioMediaHost(url: URL): boolean {
  const host = url.hostname.toLowerCase();
  return (
    url.protocol === "https:" &&
    (host === "api.twilio.com" || host.endsWith(".twilio.com") || host.endsWith(".twiliocdn.com"))
  );
}

export interface TwilioAdapterDeps {
  config: TwilioConfig;
  /** Tests point the SDK at a loopback stand-in through its own extension point (a RequestClient). */
  client?: TwilioClient;
  /** Tests serve media from loopback; production keeps the Twilio-host check. */
  isMediaHostAllowed?: (url: URL) => boolean;
}

const address = (channel: Reply["channel"], number: string) => {
  const bare = number.replace(/^whatsapp:/, "");
  return channel === "whatsapp" ? `whatsapp:${bare}` : bare;
};

export function createTwilioAdapter({
  config,
  client,
  isMediaHostAllowed = isTwilioMediaHost,
}: TwilioAdapterDeps): Adapter {
  const api = client ?? twilio(config.accountSid, config.authToken);
  const authorization = `Basic ${Buffer.from(`${config.accountSid}:${config.authToken}`).toString("base64")}`;

  return {
    provider: "twilio",
    async send(reply) {
      const from = reply.from ?? (reply.channel === "whatsapp" ? config.whatsappFrom : config.smsFrom);
      if (!from) throw new PermanentJobError(`no Twilio sender configured for ${reply.channel}`);
      try {
        await api.messages.create({
          from: address(reply.channel, from),
          to: address(reply.channel, reply.to),
          body: reply.text,
        });
      } catch (error) {
        throw classify(error);
      }
    },
    async fetchMedia(media: InboundMedia) {
      if (!("url" in media)) throw new MediaError("not a Twilio media reference");
      const url = new URL(media.url);
      if (!isMediaHostAllowed(url)) throw new MediaError(`media host ${url.hostname} is not Twilio's`);
      return downloadMedia(media.url, { headers: { authorization }, label: "twilio media" });
    },
  };
}

// 429 (and Twilio's 20429) slow the queue down; other 4xx will not get better by retrying.
function classify(error: unknown): unknown {
  const status = (error as { status?: number }).status;
  const code = (error as { code?: number }).code;
  if (status === 429 || code === 20429) return new ProviderRateLimitError("twilio", 1_000);
  if (status !== undefined && status >= 400 && status < 500) {
    return new PermanentJobError(`twilio refused the message: ${status} ${code ?? ""}`.trim());
  }
  return error;
}
