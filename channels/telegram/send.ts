import { Telegram, TelegramError } from "telegraf";
import type { InlineKeyboardMarkup } from "telegraf/types";
import type { TelegramConfig } from "../../src/config.js";
import { LANGUAGES } from "../../src/diagnosis/types.js";
import { NATIVE_NAMES } from "../core/language-names.js";
import { downloadMedia, MAX_MEDIA_BYTES } from "../core/media.js";
import { retryAfterMs } from "../core/retry-after.js";
import { type Adapter, MediaError, PermanentJobError, ProviderRateLimitError } from "../core/types.js";

export const LANGUAGE_CALLBACK_PREFIX = "lang:";

// Two buttons a row: the native names fit a phone's width.
const LANGUAGE_KEYBOARD: InlineKeyboardMarkup = {
  inline_keyboard: [0, 2, 4].map((i) =>
    LANGUAGES.slice(i, i + 2).map((lang) => ({
      text: NATIVE_NAMES[lang],
      callback_data: `${LANGUAGE_CALLBACK_PREFIX}${lang}`,
    })),
  ),
};

export interface TelegramAdapterDeps {
  config: TelegramConfig;
  /** Tests point the client at a loopback Bot API. */
  apiRoot?: string;
}

export function createTelegramAdapter({ config, apiRoot }: TelegramAdapterDeps): Adapter {
  const telegram = new Telegram(config.botToken, apiRoot ? { apiRoot } : {});
  return {
    provider: "telegram",
    async send(reply) {
      try {
        await telegram.sendMessage(reply.to, reply.text, {
          parse_mode: "HTML",
          ...(reply.languageKeyboard ? { reply_markup: LANGUAGE_KEYBOARD } : {}),
        });
      } catch (error) {
        throw classify(error);
      }
    },
    async fetchMedia(media) {
      if (!("telegramFileId" in media)) throw new MediaError("not a Telegram file");
      let link: URL;
      try {
        const file = await telegram.getFile(media.telegramFileId);
        if ((file.file_size ?? 0) > MAX_MEDIA_BYTES) throw new MediaError("telegram file over the limit");
        link = await telegram.getFileLink(file);
      } catch (error) {
        if (error instanceof MediaError) throw error;
        throw classify(error);
      }
      // The file URL embeds the bot token: it is handed to the download and never to a log or an error.
      return downloadMedia(link.href, { label: "telegram file", provider: "telegram" });
    },
    async acknowledge(callbackQueryId) {
      await telegram.answerCbQuery(callbackQueryId).catch(() => {
        // Too late to acknowledge (queries expire): the language change itself still goes through.
      });
    },
  };
}

function classify(error: unknown): unknown {
  if (!(error instanceof TelegramError)) return error;
  if (error.code === 429)
    return new ProviderRateLimitError("telegram", retryAfterMs(error.parameters?.retry_after));
  // 400 (chat not found), 403 (the user blocked the bot): retrying will not help.
  if (error.code >= 400 && error.code < 500)
    return new PermanentJobError(`telegram: ${error.code} ${error.description}`);
  return error;
}
