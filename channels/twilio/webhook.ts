import formbody from "@fastify/formbody";
import type { FastifyInstance } from "fastify";
import twilio from "twilio";
import { ChannelsUnavailableError, deferDelivery } from "../core/redis-gate.js";
import type { InboundMessage } from "../core/types.js";
import { WEBHOOK_ROUTE_CONFIG } from "../core/webhook-route.js";

export const TWILIO_PATH = "/channels/twilio";
const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>';

type Form = Record<string, string | string[] | undefined>;
const field = (form: Form, name: string): string | undefined => {
  const value = form[name];
  return Array.isArray(value) ? value[0] : value;
};

/** Twilio's messaging webhook (SMS, MMS and WhatsApp share it) as one inbound message. */
export function parseTwilioInbound(form: Form, receivedAt = new Date()): InboundMessage | undefined {
  const messageId = field(form, "MessageSid");
  const rawFrom = field(form, "From");
  const rawTo = field(form, "To");
  if (!messageId || !rawFrom || !rawTo) return undefined;
  const whatsapp = rawFrom.startsWith("whatsapp:");
  const mediaCount = Number(field(form, "NumMedia") ?? 0);

  // The first image among the attachments: farmers send one photo; vCards or audio are not ours to read.
  let media: InboundMessage["media"];
  for (let i = 0; i < mediaCount && !media; i++) {
    const url = field(form, `MediaUrl${i}`);
    const contentType = field(form, `MediaContentType${i}`) ?? "";
    if (url && contentType.startsWith("image/")) media = { url, contentType };
  }
  const text = field(form, "Body")?.trim();
  return {
    provider: "twilio",
    channel: whatsapp ? "whatsapp" : mediaCount > 0 ? "mms" : "sms",
    messageId,
    from: rawFrom.replace(/^whatsapp:/, ""),
    to: rawTo.replace(/^whatsapp:/, ""),
    ...(text ? { text } : {}),
    ...(media ? { media } : {}),
    receivedAt: receivedAt.toISOString(),
  };
}

export interface TwilioWebhookOptions {
  authToken: string;
  /** PUBLIC_BASE_URL: Twilio signs the URL it was configured with, not the one a proxy hands us. */
  publicBaseUrl: string;
  enqueue: (message: InboundMessage) => Promise<void>;
}

export async function twilioWebhook(app: FastifyInstance, options: TwilioWebhookOptions): Promise<void> {
  await app.register(formbody);
  const base = options.publicBaseUrl.replace(/\/+$/, "");

  app.post(TWILIO_PATH, { config: WEBHOOK_ROUTE_CONFIG }, async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    const signature = request.headers["x-twilio-signature"];
    // request.url keeps the query string Twilio signed; the base holds any path prefix a proxy strips.
    const publicUrl = `${base}${request.url}`;
    if (
      typeof signature !== "string" ||
      !twilio.validateRequest(options.authToken, signature, publicUrl, form)
    ) {
      request.log.warn(
        { path: TWILIO_PATH, reason: signature ? "signature mismatch" : "no signature" },
        "twilio webhook refused",
      );
      return reply.code(403).send({ detail: "Forbidden", request_id: request.id });
    }
    const message = parseTwilioInbound(form);
    if (message) {
      try {
        await options.enqueue(message);
      } catch (error) {
        // Twilio delivers it again when the webhook URL asks it to (docs/channels.md, "Redis down").
        if (error instanceof ChannelsUnavailableError) return deferDelivery(request, reply, "twilio", error);
        throw error;
      }
    } else request.log.warn({ path: TWILIO_PATH }, "twilio webhook without MessageSid/From/To ignored");
    return reply.type("text/xml").send(EMPTY_TWIML);
  });
}
