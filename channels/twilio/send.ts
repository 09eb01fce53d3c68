import twilio from "twilio";
import type { TwilioConfig } from "../../src/config.js";
import { downloadMedia } from "../core/media.js";
import { retryAfterMs } from "../core/retry-after.js";
import {
  type Adapter,
  type InboundMedia,
  MediaError,
  PermanentJobError,
  ProviderRateLimitError,
  type Reply,
} from "../core/types.js";

type RequestClient = InstanceType<typeof twilio.RequestClient>;

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
  /** The SDK's own extension point for its HTTP calls (tests point it at a loopback stand-in). */
  httpClient?: RequestClient;
  /** Tests serve media from loopback; production keeps the Twilio-host check. */
  isMediaHostAllowed?: (url: URL) => boolean;
}

const address = (channel: Reply["channel"], number: string) => {
  const bare = number.replace(/^whatsapp:/, "");
  return channel === "whatsapp" ? `whatsapp:${bare}` : bare;
};

export function createTwilioAdapter({
  config,
  httpClient = new twilio.RequestClient(),
  isMediaHostAllowed = isTwilioMediaHost,
}: TwilioAdapterDeps): Adapter {
  const api = twilio(config.accountSid, config.authToken, { httpClient: honouringRetryAfter(httpClient) });
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
      return downloadMedia(media.url, {
        headers: { authorization },
        label: "twilio media",
        provider: "twilio",
      });
    },
  };
}

/**
 * The SDK's errors drop the response headers, and with them the Retry-After of a 429: the HTTP client
 * turns such a response into our rate-limit error while the headers are still at hand.
 */
function honouringRetryAfter(httpClient: RequestClient): RequestClient {
  const request = httpClient.request.bind(httpClient);
  httpClient.request = (async (opts: Parameters<RequestClient["request"]>[0]) => {
    const response = await request(opts);
    if (response.statusCode !== 429) return response;
    const headers = (response.headers ?? {}) as Record<string, string | undefined>;
    throw new ProviderRateLimitError("twilio", retryAfterMs(headers["retry-after"]));
  }) as RequestClient["request"];
  return httpClient;
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
