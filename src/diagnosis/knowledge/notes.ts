import type { i18n } from "i18next";
import type { DetailLevel, Language } from "../types.js";
import { DISEASES_NS, NOTES_NS } from "./i18n.js";
import { isText, textOf } from "./texts.js";

/**
 * The note that is one class's own description at the reader's level (params: `classId`). A healthy answer
 * uses it to speak of its crop ("Your tomato plant looks healthy…") from the text translators already wrote
 * in diseases.json, instead of a second copy in notes.json.
 */
export const CLASS_DESCRIPTION_NOTE = "class_description";

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
  if (key === CLASS_DESCRIPTION_NOTE) {
    return textOf(i18n, DISEASES_NS, `${params.classId}.${level}.description`, language);
  }
  const byLevel = `${key}.${level}`;
  const resolved = isText(i18n, NOTES_NS, byLevel, language) ? byLevel : key;
  return textOf(i18n, NOTES_NS, resolved, language, params);
}
