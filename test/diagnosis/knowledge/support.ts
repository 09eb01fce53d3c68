import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const LOCALES_DIR = fileURLToPath(new URL("../../../locales/", import.meta.url));
export const CLASSES_JSON = fileURLToPath(new URL("../../../models/classes.json", import.meta.url));

export function readJson(path: string): unknown {
  return JSON.parse(readFileSync(path, "utf8"));
}

/** The model's classes that are no crop's condition, and so have no knowledge-base entry. */
const NOT_LEAF_CLASSES = ["other_plant", "non_plant"];

/**
 * The model's leaf classes, read from the committed model's classes.json: adding a disease to the model makes
 * these tests ask for its texts with no code edit.
 */
export const MODEL_CLASSES: readonly string[] = (
  readJson(CLASSES_JSON) as { classes: string[] }
).classes.filter((c) => !NOT_LEAF_CLASSES.includes(c));

export function localeFile(language: string, ns: string): string {
  return `${LOCALES_DIR}${language}/${ns}.json`;
}

export function hasLocale(language: string, ns: string): boolean {
  return existsSync(localeFile(language, ns));
}
