import { Telegram, TelegramError } from "telegraf";
import type { InlineKeyboardMarkup } from "telegraf/types";
import type { TelegramConfig } from "../../src/config.js";
import { downloadMedia } from "../core/media.js";
import { retryAfterMs } from "../core/retry-after.js";
import {
  type Adapter,
  type Button,
  type Capabilities,
  MediaError,
  PermanentJobError,
  ProviderRateLimitError,
} from "../core/types.js";
import { CHAT_MESSAGE_CHARS, MAX_MEDIA_BYTES } from "../limits.js";
import { TELEGRAM } from "./farmer.js";

const TELEGRAM_CAPABILITIES: Capabilities = {
  text: { kind: "chat", style: "html", maxChars: CHAT_MESSAGE_CHARS.telegram },
  buttons: true,
  typing: true,
  media: true,
};

const keyboard = (rows: Button[][]): InlineKeyboardMarkup => ({
  inline_keyboard: rows.map((row) => row.map(({ text, data }) => ({ text, callback_data: data }))),
});

export interface TelegramAdapterDeps {
  config: TelegramConfig;
  /** TELEGRAM_API_ROOT: a self-hosted Bot API server, or a stand-in. */
  apiRoot: string;
}

export function createTelegramAdapter({ config, apiRoot }: TelegramAdapterDeps): Adapter {
  const telegram = new Telegram(config.botToken, { apiRoot });
  return {
    provider: TELEGRAM,
    capabilities: () => TELEGRAM_CAPABILITIES,
    async send(reply) {
      try {
        await telegram.sendMessage(reply.to, reply.text, {
          parse_mode: "HTML",
          ...(reply.buttons ? { reply_markup: keyboard(reply.buttons) } : {}),
        });
      } catch (error) {
        throw classify(error);
      }
    },
    async showTyping(to) {
      try {
        await telegram.sendChatAction(to, "typing");
      } catch (error) {
        throw classify(error);
      }
    },
    async fetchMedia(media) {
      let link: URL;
      try {
        const file = await telegram.getFile(media.ref);
        if ((file.file_size ?? 0) > MAX_MEDIA_BYTES) throw new MediaError("telegram file over the limit");
        link = await telegram.getFileLink(file);
      } catch (error) {
        if (error instanceof MediaError) throw error;
        throw classify(error);
      }
      // The file URL embeds the bot token: it is handed to the download and never to a log or an error.
      return downloadMedia(link.href, { label: "telegram file", provider: TELEGRAM });
    },
    async acknowledge(press) {
      await telegram.answerCbQuery(press.id).catch(() => {
        // Too late to acknowledge (queries expire): the press itself still goes through.
      });
    },
  };
}

function classify(error: unknown): unknown {
  if (!(error instanceof TelegramError)) return error;
  if (error.code === 429)
    return new ProviderRateLimitError(TELEGRAM, retryAfterMs(error.parameters?.retry_after));
  // 400 (chat not found), 403 (the user blocked the bot): retrying will not help.
  if (error.code >= 400 && error.code < 500)
    return new PermanentJobError(`telegram: ${error.code} ${error.description}`);
  return error;
}
