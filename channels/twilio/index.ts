export { createTwilioAdapter, isTwilioMediaHost } from "./send.js";
export { parseTwilioInbound, TWILIO_PATH, twilioWebhook } from "./webhook.js";
