export const TELEGRAM = "telegram";

/** A Telegram farmer is their chat: chat ids and phone numbers never collide under this prefix. */
export function telegramFarmer(chatId: string): string {
  return `tg:${chatId}`;
}
