import { LANGUAGES, type Language } from "../../src/diagnosis/types.js";
import { normalizeShortCode } from "../../src/results/short-code.js";
import { isLanguage } from "./language.js";
import { NATIVE_NAMES } from "./language-names.js";
import type { Button } from "./types.js";

/**
 * What a button does, carried in its data (Telegram allows 64 bytes). A language button also says what to
 * show again in the chosen language: the result it was under (by its code) or the greeting. A feedback
 * button answers "did this help?" about one result; the photos button refuses that photos are kept.
 */
export type Action =
  | {
      kind: "language";
      language: Language;
      again: { result: string } | { text: "welcome" | "help" } | undefined;
    }
  | { kind: "feedback"; code: string; helped: boolean }
  | { kind: "refuse_photos" };

export type Again = Extract<Action, { kind: "language" }>["again"];

const LANGUAGE = "lang";
const FEEDBACK = "fb";
const REFUSE_PHOTOS = "photos:no";
const TEXTS = new Set(["welcome", "help"] as const);

export function encodeAction(action: Action): string {
  if (action.kind === "feedback") return `${FEEDBACK}:${action.code}:${action.helped ? "yes" : "no"}`;
  if (action.kind === "refuse_photos") return REFUSE_PHOTOS;
  const { again } = action;
  const tail = !again ? "" : "result" in again ? `:${again.result}` : `:${again.text}`;
  return `${LANGUAGE}:${action.language}${tail}`;
}

/** The action of a button's data, or undefined for data this version does not know (an old keyboard). */
export function decodeAction(data: string | undefined): Action | undefined {
  if (data === REFUSE_PHOTOS) return { kind: "refuse_photos" };
  const [kind, language, again, ...rest] = (data ?? "").split(":");
  if (kind === FEEDBACK) {
    const code = normalizeShortCode(language ?? "");
    const helped = again === "yes" ? true : again === "no" ? false : undefined;
    return code && helped !== undefined && rest.length === 0 ? { kind: "feedback", code, helped } : undefined;
  }
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
