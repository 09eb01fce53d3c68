import type { FastifyInstance } from "fastify";
import twilio from "twilio";
import { PUBLIC_BASE_URL, TEST_CONFIG } from "./harness.js";

/** A Twilio messaging webhook as Twilio posts it: form-encoded, signed with the account's auth token. */
export function postTwilio(app: FastifyInstance, form: Record<string, string>) {
  const signature = twilio.getExpectedTwilioSignature(
    TEST_CONFIG.twilio.authToken,
    `${PUBLIC_BASE_URL}/channels/twilio`,
    form,
  );
  return app.inject({
    method: "POST",
    url: "/channels/twilio",
    headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature },
    payload: new URLSearchParams(form).toString(),
  });
}

/** A Telegram update as the Bot API posts it to a webhook, with the secret token set at setWebhook. */
export function postTelegram(app: FastifyInstance, update: object) {
  return app.inject({
    method: "POST",
    url: "/channels/telegram",
    headers: {
      "content-type": "application/json",
      "x-telegram-bot-api-secret-token": TEST_CONFIG.telegram.webhookSecret,
    },
    payload: JSON.stringify(update),
  });
}
