import type { Language } from "../../../src/diagnosis/types.js";
import { statusText } from "./sms.js";
import type { Texts } from "./texts.js";
import type { ResultView } from "./view.js";

/** Telegram caps a message at 4096 characters; Twilio caps a WhatsApp body at 1600. */
export const CHAT_LIMITS = { telegram: 4096, whatsapp: 1600 } as const;
export type ChatFlavour = keyof typeof CHAT_LIMITS;

// Telegram replies use parse_mode HTML (escaping three characters is all it needs); WhatsApp bolds *text*.
/** How a flavour marks bold and escapes text, and how its markup reads as plain text (the console's log). */
export const STYLE: Record<
  ChatFlavour,
  { bold: (s: string) => string; esc: (s: string) => string; plain: (s: string) => string }
> = {
  telegram: {
    bold: (s) => `<b>${s}</b>`,
    esc: (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"),
    plain: (s) =>
      s
        .replace(/<\/?b>/g, "")
        .replace(/&lt;/g, "<")
        .replace(/&gt;/g, ">")
        .replace(/&amp;/g, "&"),
  },
  whatsapp: { bold: (s) => `*${s}*`, esc: (s) => s, plain: (s) => s },
};

export function renderChat(view: ResultView, language: Language, t: Texts, flavour: ChatFlavour): string {
  const { bold, esc } = STYLE[flavour];
  if (view.kind !== "diagnosis") return esc(statusText(view, language, t));

  const blocks = [
    `${bold(esc(t(language, "diagnosis", { name: view.name, confidence: view.confidence })))}\n${esc(t(language, `urgency.${view.urgency}`))}`,
    esc(view.description),
    list(bold(esc(t(language, "what_to_do"))), view.actions.map(esc)),
    list(bold(esc(t(language, "prevention"))), view.prevention.map(esc)),
  ].filter(Boolean);
  return fitBlocks(blocks, esc(t(language, "code_line", { code: view.code })), CHAT_LIMITS[flavour]);
}

/** Fixed texts (help, please resend) with the flavour's escaping. */
export function renderChatText(text: string, flavour: ChatFlavour): string {
  return STYLE[flavour].esc(text).slice(0, CHAT_LIMITS[flavour]);
}

export function list(heading: string, items: string[]): string {
  return items.length ? [heading, ...items.map((i) => `• ${i}`)].join("\n") : "";
}

// Drops whole trailing lines until the message fits, keeping the result code last.
function fitBlocks(blocks: string[], tail: string, limit: number): string {
  const lines = blocks.join("\n\n").split("\n");
  const compose = () => `${lines.join("\n").trimEnd()}\n\n${tail}`;
  while (lines.length > 1 && compose().length > limit) lines.pop();
  return compose().slice(0, limit);
}
