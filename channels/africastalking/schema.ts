import { type Static, Type } from "@sinclair/typebox";

const field = (options = {}) => Type.String({ minLength: 1, ...options });

/** Africa's Talking's incoming-SMS callback, form-encoded (from, to, text, date, id, linkId, networkCode). */
export const AfricasTalkingSms = Type.Object({
  id: field(),
  from: field(),
  to: field(),
  text: Type.Optional(Type.String()),
  date: Type.Optional(Type.String()),
  linkId: Type.Optional(Type.String()),
});
export type AfricasTalkingSms = Static<typeof AfricasTalkingSms>;

/**
 * Africa's Talking's USSD callback: `text` holds every input of the session so far, joined by "*" (empty on
 * the first screen).
 */
export const AfricasTalkingUssd = Type.Object({
  sessionId: field(),
  phoneNumber: field({ pattern: "^\\+?[0-9]{6,15}$" }),
  serviceCode: Type.Optional(Type.String()),
  text: Type.String(),
});
export type AfricasTalkingUssd = Static<typeof AfricasTalkingUssd>;
