import formbody from "@fastify/formbody";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import twilio from "twilio";
import type { WebhookContext } from "../core/provider.js";
import { enqueueOrDefer } from "../core/redis-gate.js";
import type { InboundMessage } from "../core/types.js";
import { type Acknowledge, ignoreMalformed, WEBHOOK_ROUTE_CONFIG } from "../core/webhook-route.js";
import { TWILIO, twilioFarmer } from "./farmer.js";
import { TwilioForm } from "./schema.js";

export const TWILIO_PATH = "/channels/twilio";
const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response></Response>';

// A 2xx with empty TwiML: Twilio sends nothing back by itself, logs no error and retries nothing.
const ok: Acknowledge = (reply) => reply.type("text/xml").send(EMPTY_TWIML);

/** Twilio's messaging webhook (SMS, MMS and WhatsApp share it) as one inbound message. */
export function parseTwilioInbound(form: TwilioForm, receivedAt = new Date()): InboundMessage {
  const whatsapp = form.From.startsWith("whatsapp:");
  const mediaCount = Number(form.NumMedia ?? 0);

  // The first image among the attachments: farmers send one photo; vCards or audio are not ours to read.
  let media: InboundMessage["media"];
  for (let i = 0; i < mediaCount && !media; i++) {
    const url = form[`MediaUrl${i}`];
    const contentType = form[`MediaContentType${i}`] ?? "";
    if (url && contentType.startsWith("image/")) media = { ref: url, contentType };
  }
  const text = form.Body?.trim();
  const from = twilioFarmer(form.From);
  return {
    provider: TWILIO,
    channel: whatsapp ? "whatsapp" : mediaCount > 0 ? "mms" : "sms",
    messageId: form.MessageSid,
    from,
    to: form.To.replace(/^whatsapp:/, ""),
    owner: from,
    phone: from,
    ...(text ? { text } : {}),
    ...(media ? { media } : {}),
    receivedAt: receivedAt.toISOString(),
  };
}

export interface TwilioWebhookOptions {
  authToken: string;
  /** PUBLIC_BASE_URL: Twilio signs the URL it was configured with, not the one a proxy hands us. */
  publicBaseUrl: string;
  enqueue: WebhookContext["enqueue"];
}

export const twilioWebhook: FastifyPluginAsyncTypebox<TwilioWebhookOptions> = async (app, options) => {
  await app.register(formbody);
  const base = options.publicBaseUrl.replace(/\/+$/, "");

  // The signature covers the form, so it is checked once the form is parsed and before it is validated:
  // a malformed form is answered as Twilio's only when Twilio signed it.
  app.addHook("preValidation", async (request, reply) => {
    const signature = request.headers["x-twilio-signature"];
    // request.url keeps the query string Twilio signed; the base holds any path prefix a proxy strips.
    const publicUrl = `${base}${request.url}`;
    const form = (request.body ?? {}) as Record<string, string>;
    if (
      typeof signature === "string" &&
      twilio.validateRequest(options.authToken, signature, publicUrl, form)
    )
      return;
    request.log.warn(
      { path: TWILIO_PATH, reason: signature ? "signature mismatch" : "no signature" },
      "twilio webhook refused",
    );
    return reply.code(403).send({ detail: "Forbidden", request_id: request.id });
  });

  app.post(
    TWILIO_PATH,
    { config: WEBHOOK_ROUTE_CONFIG, schema: { body: TwilioForm, hide: true }, attachValidation: true },
    async (request, reply) => {
      if (request.validationError)
        return ignoreMalformed(request, reply, TWILIO, ok, request.validationError.message);
      // Twilio delivers it again when the webhook URL asks it to (docs/channels.md, "Redis down").
      return enqueueOrDefer(
        request,
        reply,
        TWILIO,
        () => options.enqueue(parseTwilioInbound(request.body)),
        ok,
      );
    },
  );
};
