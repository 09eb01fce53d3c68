import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { WebhookContext } from "../core/provider.js";
import { enqueueOrDefer } from "../core/redis-gate.js";
import { sameSecret } from "../core/secret.js";
import type { InboundMessage } from "../core/types.js";
import {
  type Acknowledge,
  acknowledgeUnreadable,
  ignoreMalformed,
  WEBHOOK_ROUTE_CONFIG,
} from "../core/webhook-route.js";
import { MAX_MEDIA_BYTES } from "../limits.js";
import { TELEGRAM, telegramFarmer } from "./farmer.js";
import { type TelegramMessage, TelegramUpdate } from "./schema.js";

export const TELEGRAM_PATH = "/channels/telegram";

// Telegram re-sends an update until it gets a 2xx, holding back the ones after it: every update we take,
// acted on or not, is acknowledged.
const ok: Acknowledge = (reply) => reply.code(200).send({ ok: true });

type PhotoSize = NonNullable<TelegramMessage["photo"]>[number];

// Telegram lists a photo in ascending sizes; the largest one under the download limit has the most detail.
function bestPhoto(photo: PhotoSize[]): PhotoSize | undefined {
  return [...photo].reverse().find((p) => (p.file_size ?? 0) <= MAX_MEDIA_BYTES);
}

/** One Telegram update as an inbound message; updates we do not act on (edits, joins...) give undefined. */
export function parseTelegramUpdate(
  update: TelegramUpdate,
  receivedAt = new Date(),
): InboundMessage | undefined {
  const at = receivedAt.toISOString();
  const base = { provider: TELEGRAM, channel: "telegram", messageId: String(update.update_id), to: "bot" };

  // A farmer is their chat: in a group every member would share one farmer's results, language and consent
  // (one member's "9" would delete the others' kept photos). The bot answers private chats only.
  const chatType = update.callback_query?.message?.chat.type ?? update.message?.chat.type;
  if (chatType !== undefined && chatType !== "private") return undefined;

  // Every button press is answered, or the user's button keeps spinning. Our buttons are in private chats,
  // where the chat id is the user's id: the fallback when Telegram leaves an old message out.
  const callback = update.callback_query;
  if (callback) {
    const chat = String(callback.message?.chat.id ?? callback.from.id);
    return {
      ...base,
      from: chat,
      owner: telegramFarmer(chat),
      button: { id: callback.id, ...(callback.data ? { data: callback.data } : {}) },
      ...(callback.from.language_code ? { languageHint: callback.from.language_code } : {}),
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
  // "/start", or "/start <payload>" from a deep link: the conversation opens.
  const start = !fileId && /^\/start(\s|@|$)/.test(text ?? "");
  const hint = message.from?.language_code;
  const chat = String(message.chat.id);
  return {
    ...base,
    from: chat,
    owner: telegramFarmer(chat),
    ...(text && !start ? { text } : {}),
    ...(start ? { start } : {}),
    ...(fileId ? { media: { ref: fileId } } : {}),
    ...(hint ? { languageHint: hint } : {}),
    receivedAt: at,
  };
}

export interface TelegramWebhookOptions {
  webhookSecret: string;
  enqueue: WebhookContext["enqueue"];
}

export const telegramWebhook: FastifyPluginAsyncTypebox<TelegramWebhookOptions> = async (app, options) => {
  acknowledgeUnreadable(app, TELEGRAM, () => ok);
  // The secret header is checked before the body is read: an update from anyone else is refused unread.
  app.addHook("onRequest", async (request, reply) => {
    const header = request.headers["x-telegram-bot-api-secret-token"];
    if (sameSecret(typeof header === "string" ? header : undefined, options.webhookSecret)) return;
    request.log.warn(
      { path: TELEGRAM_PATH, reason: header ? "secret mismatch" : "no secret" },
      "telegram webhook refused",
    );
    return reply.code(403).send({ detail: "Forbidden", request_id: request.id });
  });

  app.post(
    TELEGRAM_PATH,
    { config: WEBHOOK_ROUTE_CONFIG, schema: { body: TelegramUpdate, hide: true }, attachValidation: true },
    async (request, reply) => {
      if (request.validationError)
        return ignoreMalformed(request, reply, TELEGRAM, ok, request.validationError.message);
      const message = parseTelegramUpdate(request.body);
      // Telegram delivers an update again until it gets a 2xx: one we do not act on is acknowledged too.
      return enqueueOrDefer(request, reply, TELEGRAM, async () => message && options.enqueue(message), ok);
    },
  );
};
