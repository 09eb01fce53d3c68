import { type FieldProblem, FieldValidationError } from "../http-errors.js";
import type { Routing } from "../results/types.js";
import { USER_DATA_MAX_BYTES } from "./request.js";

/** The routing channels `user_data` may name (design.md): the channels' providers say which they serve. */
export const ROUTING_CHANNELS = ["sms", "whatsapp", "telegram"] as const;
const E164 = /^\+[1-9]\d{6,14}$/;
// Telegram chat ids are integers (negative for groups), up to 52 bits.
const CHAT_ID = /^-?\d{1,16}$/;

/**
 * `user_data` is a JSON object of caller metadata (design.md). Only its routing keys are checked; with a
 * `channel`, they say where to send the result, so they must be complete and well formed (422 otherwise).
 */
export function parseUserData(raw: string | undefined): Routing | undefined {
  if (raw === undefined) return undefined;
  const problem = (key: string | undefined, msg: string, type: string): FieldValidationError =>
    new FieldValidationError([{ loc: ["body", "user_data", ...(key ? [key] : [])], msg, type }]);

  if (Buffer.byteLength(raw, "utf8") > USER_DATA_MAX_BYTES) {
    throw problem(undefined, `user_data should be at most ${USER_DATA_MAX_BYTES} bytes`, "string_too_long");
  }
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    throw problem(undefined, "user_data should be valid JSON text", "json_invalid");
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw problem(undefined, "user_data should be a JSON object", "dict_type");
  }
  const { channel, phone, chat_id: chatId } = data as Record<string, unknown>;
  const problems: FieldProblem[] = [];
  const loc = (key: string) => ["body", "user_data", key];

  if (channel !== undefined && !ROUTING_CHANNELS.includes(channel as (typeof ROUTING_CHANNELS)[number])) {
    problems.push({
      loc: loc("channel"),
      msg: `Input should be ${ROUTING_CHANNELS.map((c) => `'${c}'`).join(", ")}`,
      type: "enum",
    });
  }
  if (phone !== undefined && (typeof phone !== "string" || !E164.test(phone))) {
    problems.push({
      loc: loc("phone"),
      msg: "Phone number should be in E.164 form, e.g. +254712345678",
      type: "phone_e164",
    });
  }
  const chatIdText = typeof chatId === "number" && Number.isSafeInteger(chatId) ? String(chatId) : chatId;
  if (chatIdText !== undefined && (typeof chatIdText !== "string" || !CHAT_ID.test(chatIdText))) {
    problems.push({
      loc: loc("chat_id"),
      msg: "chat_id should be a Telegram chat id (an integer)",
      type: "chat_id",
    });
  }
  if (channel === "telegram" && chatIdText === undefined) {
    problems.push({ loc: loc("chat_id"), msg: "Field required when channel is 'telegram'", type: "missing" });
  }
  if ((channel === "sms" || channel === "whatsapp") && phone === undefined) {
    problems.push({ loc: loc("phone"), msg: `Field required when channel is '${channel}'`, type: "missing" });
  }
  if (problems.length > 0) throw new FieldValidationError(problems);
  if (channel === undefined) return undefined;
  return {
    channel: channel as Routing["channel"],
    ...(typeof phone === "string" ? { phone } : {}),
    ...(typeof chatIdText === "string" ? { chatId: chatIdText } : {}),
  };
}
