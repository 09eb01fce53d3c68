import type { Config } from "../../src/config.js";
import { createAfricasTalkingAdapter } from "../africastalking/send.js";
import { createTelegramAdapter } from "../telegram/send.js";
import { createTwilioAdapter } from "../twilio/send.js";
import type { Adapters } from "./handlers.js";

/** One adapter per provider whose credentials are set. */
export function createAdapters(
  config: Pick<Config, "twilio" | "telegram" | "africasTalking">,
  { telegramApiRoot }: { telegramApiRoot?: string | undefined } = {},
): Adapters {
  const adapters: Adapters = {};
  if (config.twilio) adapters.twilio = createTwilioAdapter({ config: config.twilio });
  if (config.telegram)
    adapters.telegram = createTelegramAdapter({
      config: config.telegram,
      ...(telegramApiRoot ? { apiRoot: telegramApiRoot } : {}),
    });
  if (config.africasTalking)
    adapters.africastalking = createAfricasTalkingAdapter({ config: config.africasTalking });
  return adapters;
}
