export { createTelegramAdapter, LANGUAGE_CALLBACK_PREFIX } from "./send.js";
export { parseTelegramUpdate, TELEGRAM_PATH, telegramWebhook } from "./webhook.js";
