import type { i18n } from "i18next";
import type { DetailLevel, Language } from "../types.js";
import { NOTES_NS } from "./i18n.js";
import { isText, textOf } from "./texts.js";

/**
 * One `additional_notes` text. A note whose wording depends on the reader is nested by level
 * (`unsure.simple`, `unsure.expert`); one that reads the same for everyone (`quality.blurry`,
 * `crops.maize`) is a plain string, so translators only write what differs.
 */
export function note(
  key: string,
  language: Language,
  level: DetailLevel,
  params: Record<string, string>,
  i18n: i18n,
): string {
  const byLevel = `${key}.${level}`;
  const resolved = isText(i18n, NOTES_NS, byLevel, language) ? byLevel : key;
  return textOf(i18n, NOTES_NS, resolved, language, params);
}
