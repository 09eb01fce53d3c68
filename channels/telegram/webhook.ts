import type { FastifyInstance } from "fastify";
import { languageFromTag } from "../core/language.js";
import { ChannelsUnavailableError, deferDelivery } from "../core/redis-gate.js";
import { sameSecret } from "../core/secret.js";
import type { InboundMessage } from "../core/types.js";
import { WEBHOOK_ROUTE_CONFIG } from "../core/webhook-route.js";
import { LANGUAGE_CALLBACK_PREFIX } from "./send.js";

export const TELEGRAM_PATH = "/channels/telegram";

// The few fields of Telegram's Update we read (https://core.telegram.org/bots/api#update).
interface PhotoSize {
  file_id: string;
  file_size?: number;
  width: number;
  height: number;
}
interface TelegramMessage {
  message_id: number;
  chat: { id: number };
  from?: { language_code?: string };
  text?: string;
  caption?: string;
  photo?: PhotoSize[];
  document?: { file_id: string; mime_type?: string; file_size?: number };
}
export interface TelegramUpdate {
  update_id: number;
  message?: TelegramMessage;
  callback_query?: {
    id: string;
    from: { id: number; language_code?: string };
    /** Absent when the message with the button is too old for Telegram to include. */
    message?: { chat: { id: number } };
    data?: string;
  };
}

const MAX_PHOTO_BYTES = 10 * 1024 * 1024;

// Telegram lists a photo in ascending sizes; the largest one under the core's limit has the most detail.
function bestPhoto(photo: PhotoSize[]): PhotoSize | undefined {
  return [...photo].reverse().find((p) => (p.file_size ?? 0) <= MAX_PHOTO_BYTES);
}

/** One Telegram update as an inbound message; updates we do not act on (edits, joins...) give undefined. */
export function parseTelegramUpdate(
  update: TelegramUpdate,
  receivedAt = new Date(),
): InboundMessage | undefined {
  const base = {
    provider: "telegram" as const,
    channel: "telegram" as const,
    messageId: String(update.update_id),
    to: "bot",
  };
  const at = receivedAt.toISOString();

  // Every button press is answered, or the user's button keeps spinning. Our buttons are in private chats,
  // where the chat id is the user's id: the fallback when Telegram leaves an old message out.
  const callback = update.callback_query;
  if (callback) {
    const data = callback.data ?? "";
    const choice = data.startsWith(LANGUAGE_CALLBACK_PREFIX)
      ? languageFromTag(data.slice(LANGUAGE_CALLBACK_PREFIX.length))
      : undefined;
    return {
      ...base,
      from: String(callback.message?.chat.id ?? callback.from.id),
      // A button this version does not know (an old keyboard) gets help, like any other text.
      ...(choice ? { languageChoice: choice } : {}),
      ...(callback.from.language_code ? { languageHint: callback.from.language_code } : {}),
      callbackQueryId: callback.id,
      receivedAt: at,
    };
  }

  const message = update.message;
  if (!message) return undefined;
  const photo = message.photo ? bestPhoto(message.photo) : undefined;
  // A photo sent "as a file" keeps full resolution; it arrives as an image document.
  const document = message.document?.mime_type?.startsWith("image/") ? message.document : undefined;
  const fileId = photo?.file_id ?? document?.file_id;
  const text = (message.text ?? message.caption)?.trim();
  const hint = message.from?.language_code;
  return {
    ...base,
    from: String(message.chat.id),
    ...(text ? { text } : {}),
    ...(fileId ? { media: { telegramFileId: fileId } } : {}),
    ...(hint ? { languageHint: hint } : {}),
    receivedAt: at,
  };
}

export interface TelegramWebhookOptions {
  webhookSecret: string;
  enqueue: (message: InboundMessage) => Promise<void>;
}

export async function telegramWebhook(app: FastifyInstance, options: TelegramWebhookOptions): Promise<void> {
  app.post(TELEGRAM_PATH, { config: WEBHOOK_ROUTE_CONFIG }, async (request, reply) => {
    const header = request.headers["x-telegram-bot-api-secret-token"];
    if (!sameSecret(typeof header === "string" ? header : undefined, options.webhookSecret)) {
      request.log.warn(
        { path: TELEGRAM_PATH, reason: header ? "secret mismatch" : "no secret" },
        "telegram webhook refused",
      );
      return reply.code(403).send({ detail: "Forbidden", request_id: request.id });
    }
    const update = request.body as TelegramUpdate | undefined;
    const message = update && typeof update.update_id === "number" ? parseTelegramUpdate(update) : undefined;
    try {
      if (message) await options.enqueue(message);
    } catch (error) {
      // Telegram delivers an update again until it gets a 2xx.
      if (error instanceof ChannelsUnavailableError) return deferDelivery(request, reply, "telegram", error);
      throw error;
    }
    // Telegram re-sends an update until it gets a 2xx: updates we ignore are acknowledged too.
    return reply.code(200).send({ ok: true });
  });
}
