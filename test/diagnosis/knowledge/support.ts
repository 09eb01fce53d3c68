import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The model's classes (dataset folders), besides `non_plant` which has no knowledge-base entry. */
export const MODEL_CLASSES = [
  "bean__angular_leaf_spot",
  "bean__healthy",
  "bean__rust",
  "maize__common_rust",
  "maize__gray_leaf_spot",
  "maize__healthy",
  "maize__northern_leaf_blight",
  "pepper__bacterial_spot",
  "pepper__healthy",
  "potato__early_blight",
  "potato__healthy",
  "potato__late_blight",
  "rice__bacterial_leaf_blight",
  "rice__brown_spot",
  "rice__leaf_smut",
  "tomato__bacterial_spot",
  "tomato__early_blight",
  "tomato__healthy",
  "tomato__late_blight",
  "tomato__leaf_mold",
  "tomato__mosaic_virus",
  "tomato__septoria_leaf_spot",
  "tomato__spider_mites",
  "tomato__target_spot",
  "tomato__yellow_leaf_curl_virus",
] as const;

export const LOCALES_DIR = fileURLToPath(new URL("../../../locales/", import.meta.url));
export const CLASSES_JSON = fileURLToPath(new URL("../../../models/classes.json", import.meta.url));

export function readJson(path: string): unknown {
  return JSON.parse(readFileSync(path, "utf8"));
}

export function localeFile(language: string, ns: string): string {
  return `${LOCALES_DIR}${language}/${ns}.json`;
}

export function hasLocale(language: string, ns: string): boolean {
  return existsSync(localeFile(language, ns));
}
