import { type Static, Type } from "@sinclair/typebox";

/**
 * Twilio's messaging webhook (SMS, MMS and WhatsApp share it), form-encoded: every field a single string.
 * The fields read are named; media come as MediaUrl<n> / MediaContentType<n>, and Twilio adds fields over
 * time, so any other string field is allowed.
 */
export const TwilioForm = Type.Intersect([
  Type.Object({
    MessageSid: Type.String({ pattern: "^[A-Z]{2}[0-9a-fA-F]{32}$" }),
    From: Type.String({ minLength: 1 }),
    To: Type.String({ minLength: 1 }),
    Body: Type.Optional(Type.String()),
    NumMedia: Type.Optional(Type.String({ pattern: "^[0-9]{1,2}$" })),
  }),
  Type.Record(Type.String(), Type.String()),
]);
export type TwilioForm = Static<typeof TwilioForm>;
