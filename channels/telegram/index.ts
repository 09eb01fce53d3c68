import type { ChannelProvider } from "../core/provider.js";
import { TELEGRAM, telegramFarmer } from "./farmer.js";
import { createTelegramAdapter } from "./send.js";
import { telegramWebhook } from "./webhook.js";

export const telegramProvider: ChannelProvider = {
  id: TELEGRAM,
  configured: (config) => Boolean(config.telegram),
  apiRoot: { variable: "TELEGRAM_API_ROOT", default: () => "https://api.telegram.org" },
  farmerKey: telegramFarmer,
  registerWebhook: async (app, { config, enqueue }) => {
    await app.register(telegramWebhook, { webhookSecret: config.telegram!.webhookSecret, enqueue });
  },
  createAdapter: (config, apiRoot) => createTelegramAdapter({ config: config.telegram!, apiRoot }),
  routes: { telegram: { channel: "telegram", preference: 1, address: (routing) => routing.chatId } },
  canRoute: () => true,
};
