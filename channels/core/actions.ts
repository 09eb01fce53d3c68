import { LANGUAGES, type Language } from "../../src/diagnosis/types.js";
import { normalizeShortCode } from "../../src/results/short-code.js";
import { isLanguage } from "./language.js";
import { NATIVE_NAMES } from "./language-names.js";
import type { Button } from "./types.js";

/**
 * What a button does, carried in its data (Telegram allows 64 bytes). A language button also says what to
 * show again in the chosen language: the result it was under (by its code) or the greeting.
 */
export type Action = {
  kind: "language";
  language: Language;
  again: { result: string } | { text: "welcome" | "help" } | undefined;
};

export type Again = Action["again"];

const LANGUAGE = "lang";
const TEXTS = new Set(["welcome", "help"] as const);

export function encodeAction(action: Action): string {
  const { again } = action;
  const tail = !again ? "" : "result" in again ? `:${again.result}` : `:${again.text}`;
  return `${LANGUAGE}:${action.language}${tail}`;
}

/** The action of a button's data, or undefined for data this version does not know (an old keyboard). */
export function decodeAction(data: string | undefined): Action | undefined {
  const [kind, language, again, ...rest] = (data ?? "").split(":");
  if (kind !== LANGUAGE || !language || !isLanguage(language) || rest.length > 0) return undefined;
  if (again === undefined) return { kind: "language", language, again: undefined };
  if (TEXTS.has(again as "welcome"))
    return { kind: "language", language, again: { text: again as "welcome" } };
  const code = normalizeShortCode(again);
  return code ? { kind: "language", language, again: { result: code } } : undefined;
}

/** The six languages, two a row (their own names fit a phone's width), each showing `again` in it. */
export function languageButtons(again: Again): Button[][] {
  const buttons = LANGUAGES.map((language) => ({
    text: NATIVE_NAMES[language],
    data: encodeAction({ kind: "language", language, again }),
  }));
  return [0, 2, 4].map((i) => buttons.slice(i, i + 2));
}
