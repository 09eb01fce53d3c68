import type { Config } from "../../src/config.js";
import type { Routing } from "../../src/results/types.js";

type ProviderConfig = Pick<Config, "twilio" | "telegram" | "africasTalking">;

/** Channels run when any provider's credentials are set (each provider only when its own are). */
export function anyChannelConfigured(config: ProviderConfig): boolean {
  return Boolean(config.twilio || config.telegram || config.africasTalking);
}

/**
 * The routing channels a REST result can be sent on (handlers.ts destinationOf): a routed result has no
 * number the farmer wrote to, so Twilio needs its configured sender for the channel.
 */
export function deliverableChannels(config: ProviderConfig): Set<Routing["channel"]> {
  const channels = new Set<Routing["channel"]>();
  if (config.telegram) channels.add("telegram");
  if (config.twilio?.whatsappFrom) channels.add("whatsapp");
  if (config.africasTalking || config.twilio?.smsFrom) channels.add("sms");
  return channels;
}
