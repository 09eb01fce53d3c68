import type { Config } from "../../src/config.js";

/** Channels run when any provider's credentials are set (each provider only when its own are). */
export function anyChannelConfigured(
  config: Pick<Config, "twilio" | "telegram" | "africasTalking">,
): boolean {
  return Boolean(config.twilio || config.telegram || config.africasTalking);
}
