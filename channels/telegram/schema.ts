import { type Static, Type } from "@sinclair/typebox";

// The parts of Telegram's Update (https://core.telegram.org/bots/api#update) the bot reads. Telegram adds
// fields over time: unknown ones are allowed; the ones read must have the documented types.
// `type`: private, group, supergroup or channel (Telegram always sends it; optional here for old fixtures' sake).
const Chat = Type.Object({ id: Type.Integer(), type: Type.Optional(Type.String()) });
const User = Type.Object({ id: Type.Integer(), language_code: Type.Optional(Type.String()) });
const PhotoSize = Type.Object({
  file_id: Type.String({ minLength: 1 }),
  file_size: Type.Optional(Type.Integer({ minimum: 0 })),
  width: Type.Integer(),
  height: Type.Integer(),
});

const Message = Type.Object({
  message_id: Type.Integer(),
  chat: Chat,
  from: Type.Optional(User),
  text: Type.Optional(Type.String()),
  caption: Type.Optional(Type.String()),
  photo: Type.Optional(Type.Array(PhotoSize)),
  document: Type.Optional(
    Type.Object({
      file_id: Type.String({ minLength: 1 }),
      mime_type: Type.Optional(Type.String()),
      file_size: Type.Optional(Type.Integer({ minimum: 0 })),
    }),
  ),
});

const CallbackQuery = Type.Object({
  id: Type.String({ minLength: 1 }),
  from: User,
  /** Absent when the message with the button is too old for Telegram to include. */
  message: Type.Optional(Type.Object({ chat: Chat })),
  data: Type.Optional(Type.String()),
});

/** One update as Telegram posts it to the webhook: only `message` and `callback_query` are acted on. */
export const TelegramUpdate = Type.Object({
  update_id: Type.Integer(),
  message: Type.Optional(Message),
  callback_query: Type.Optional(CallbackQuery),
});
export type TelegramUpdate = Static<typeof TelegramUpdate>;
export type TelegramMessage = Static<typeof Message>;
