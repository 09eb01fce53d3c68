import type { ChannelProvider } from "../core/provider.js";
import { TWILIO, TWILIO_API_ROOT, twilioFarmer } from "./farmer.js";
import { createTwilioAdapter } from "./send.js";
import { twilioWebhook } from "./webhook.js";

export const twilioProvider: ChannelProvider = {
  id: TWILIO,
  configured: (config) => Boolean(config.twilio),
  apiRoot: { variable: "TWILIO_API_ROOT", default: () => TWILIO_API_ROOT },
  farmerKey: twilioFarmer,
  registerWebhook: async (app, { config, enqueue }) => {
    const { publicBaseUrl } = config;
    if (!publicBaseUrl) throw new Error("the Twilio webhook needs PUBLIC_BASE_URL");
    await app.register(twilioWebhook, { authToken: config.twilio!.authToken, publicBaseUrl, enqueue });
  },
  createAdapter: (config, apiRoot) => createTwilioAdapter({ config: config.twilio!, apiRoot }),
  // A routed result has no number the farmer wrote to: it goes out from the configured sender.
  routes: {
    whatsapp: { channel: "whatsapp", preference: 1, address: (routing) => routing.phone },
    sms: { channel: "sms", preference: 1, address: (routing) => routing.phone },
  },
  canRoute: (channel, config) =>
    Boolean(channel === "whatsapp" ? config.twilio?.whatsappFrom : config.twilio?.smsFrom),
};
