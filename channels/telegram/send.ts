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
import { CHAT_MESSAGE_CHARS, MAX_MEDIA_BYTES, PROVIDER_TIMEOUT_MS } from "../limits.js";
import { TELEGRAM } from "./farmer.js";

const TELEGRAM_CAPABILITIES: Capabilities = {
  text: { kind: "chat", style: "html", maxChars: CHAT_MESSAGE_CHARS.telegram },
  buttons: true,
  typing: true,
  media: true,
};

/** Telegraf types the signal as the abort-controller shim's; node-fetch, which it calls, takes Node's own. */
type TelegrafSignal = NonNullable<NonNullable<Parameters<Telegram["callApi"]>[2]>["signal"]>;

const keyboard = (rows: Button[][]): InlineKeyboardMarkup => ({
  inline_keyboard: rows.map((row) => row.map(({ text, data }) => ({ text, callback_data: data }))),
});

export interface TelegramAdapterDeps {
  config: TelegramConfig;
  /** TELEGRAM_API_ROOT: a self-hosted Bot API server, or a stand-in. */
  apiRoot: string;
  /** A call abandoned after (PROVIDER_TIMEOUT_MS). */
  timeoutMs?: number;
}

export function createTelegramAdapter({
  config,
  apiRoot,
  timeoutMs = PROVIDER_TIMEOUT_MS,
}: TelegramAdapterDeps): Adapter {
  const telegram = new Telegram(config.botToken, { apiRoot });
  // Telegraf's own methods wait up to 500 s for an answer (its client's fixed timeout) and take no signal; a
  // stalled connection would hold the farmer's job, and every later message of theirs, that long.
  const call: Telegram["callApi"] = (method, payload) =>
    telegram.callApi(method, payload, {
      signal: AbortSignal.timeout(timeoutMs) as unknown as TelegrafSignal,
    });
  return {
    provider: TELEGRAM,
    capabilities: () => TELEGRAM_CAPABILITIES,
    async send(reply) {
      try {
        await call("sendMessage", {
          chat_id: reply.to,
          text: reply.text,
          parse_mode: "HTML",
          ...(reply.buttons ? { reply_markup: keyboard(reply.buttons) } : {}),
        });
      } catch (error) {
        throw classify(error);
      }
    },
    async showTyping(to) {
      try {
        await call("sendChatAction", { chat_id: to, action: "typing" });
      } catch (error) {
        throw classify(error);
      }
    },
    async fetchMedia(media) {
      let link: URL;
      try {
        const file = await call("getFile", { file_id: media.ref });
        if ((file.file_size ?? 0) > MAX_MEDIA_BYTES)
          throw new MediaError("telegram file over the limit", { tooLarge: true });
        link = await telegram.getFileLink(file);
      } catch (error) {
        if (error instanceof MediaError) throw error;
        // The Bot API serves files up to 20 MB: a bigger photo sent "as a file" is refused with a 400.
        if (
          error instanceof TelegramError &&
          error.code === 400 &&
          /file is too big/i.test(error.description)
        )
          throw new MediaError("telegram file over the Bot API's limit", { tooLarge: true });
        throw classify(error);
      }
      // The file URL embeds the bot token: it is handed to the download and never to a log or an error.
      return downloadMedia(link.href, { label: "telegram file", provider: TELEGRAM });
    },
    async acknowledge(press) {
      await call("answerCallbackQuery", { callback_query_id: press.id }).catch(() => {
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
