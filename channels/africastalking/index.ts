import type { ChannelProvider } from "../core/provider.js";
import { AFRICAS_TALKING, africasTalkingApiRoot, africasTalkingFarmer } from "./farmer.js";
import { createAfricasTalkingAdapter } from "./send.js";
import { africasTalkingWebhook } from "./webhook.js";

export const africasTalkingProvider: ChannelProvider = {
  id: AFRICAS_TALKING,
  configured: (config) => Boolean(config.africasTalking),
  apiRoot: {
    variable: "AT_API_ROOT",
    default: (config) => africasTalkingApiRoot(config.africasTalking?.username ?? ""),
  },
  farmerKey: africasTalkingFarmer,
  registerWebhook: async (
    app,
    { config, enqueue, outbox, gate, store, languages, texts, knowledge, view },
  ) => {
    const { webhookToken, allowedIps } = config.africasTalking!;
    await app.register(africasTalkingWebhook, {
      webhookToken,
      allowedIps,
      enqueue,
      outbox,
      gate,
      ussd: { store, languages, texts, knowledge, view },
    });
  },
  createAdapter: (config, apiRoot) =>
    createAfricasTalkingAdapter({ config: config.africasTalking!, apiRoot }),
  // Preferred for SMS: the farmers' own networks, where Twilio's numbers are abroad.
  routes: { sms: { channel: "sms", preference: 2, address: (routing) => routing.phone } },
  canRoute: () => true,
};
