import type { Language } from "../../../src/diagnosis/types.js";
import { headline, officerSentences, statusParts } from "./parts.js";
import type { Texts } from "./texts.js";
import { isAnswer, type ResultView } from "./view.js";

export type ChatStyle = "html" | "asterisks";

// `html`: Telegram's parse_mode HTML (escaping three characters is all it needs); `asterisks`: *bold* as
// WhatsApp shows it, nothing to escape.
/** How a style marks bold and escapes text, and how its markup reads as plain text (the console's log). */
export const STYLE: Record<
  ChatStyle,
  { bold: (s: string) => string; esc: (s: string) => string; plain: (s: string) => string }
> = {
  html: {
    bold: (s) => `<b>${s}</b>`,
    esc: (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"),
    plain: (s) =>
      s
        .replace(/<\/?b>/g, "")
        .replace(/&lt;/g, "<")
        .replace(/&gt;/g, ">")
        .replace(/&amp;/g, "&"),
  },
  asterisks: { bold: (s) => `*${s}*`, esc: (s) => s, plain: (s) => s },
};

export function renderChat(
  view: ResultView,
  language: Language,
  t: Texts,
  style: ChatStyle,
  maxChars: number,
): string {
  const { bold, esc } = STYLE[style];
  let blocks: string[];
  if (view.kind === "diagnosis") {
    blocks = [
      `${bold(esc(headline(view.name, view.band, language, t)))}\n${esc(t(language, `urgency.${view.urgency}`))}`,
      esc(view.description),
      list(bold(esc(t(language, "what_to_do"))), view.actions.map(esc)),
      list(bold(esc(t(language, "prevention"))), view.prevention.map(esc)),
      esc(officerSentences(view, language, t).join(" ")),
    ];
  } else {
    const parts = statusParts(view, language, t);
    blocks = [parts.headline ? bold(esc(parts.headline)) : "", esc(parts.sentences.join(" "))];
  }
  const tail = isAnswer(view) ? esc(t(language, "code_line", { code: view.code })) : "";
  return fitBlocks(blocks.filter(Boolean), tail, maxChars);
}

/** Fixed texts (help, please resend) with the style's escaping. */
export function renderChatText(text: string, style: ChatStyle, maxChars: number): string {
  return fitBlocks([STYLE[style].esc(text)], "", maxChars);
}

export function list(heading: string, items: string[]): string {
  return items.length ? [heading, ...items.map((i) => `• ${i}`)].join("\n") : "";
}

// Drops whole trailing lines until the message fits, keeping the result code last; a first line that alone
// is too long loses whole words from its end.
export function fitBlocks(blocks: string[], tail: string, limit: number): string {
  const lines = blocks.join("\n\n").split("\n");
  const compose = () => [lines.join("\n").trimEnd(), tail].filter(Boolean).join("\n\n");
  while (lines.length > 1 && compose().length > limit) lines.pop();
  for (let bare = lines[0] ?? ""; compose().length > limit && bare.includes(" "); ) {
    bare = bare.slice(0, bare.lastIndexOf(" "));
    lines[0] = `${bare} …`;
  }
  return compose();
}
