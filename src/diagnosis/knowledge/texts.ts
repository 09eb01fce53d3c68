import type { i18n } from "i18next";
import type { Language } from "../types.js";
import { KnowledgeError } from "./entries.js";

// Every read of a text goes through here, so a text missing in one language fails loudly (and the same way
// in production and in tests) instead of coming out as a key name or, worse, in another language.

export function textOf(i18n: i18n, ns: string, key: string, language: Language, params?: object): string {
  if (!i18n.exists(key, { lng: language, ns })) throw missing(ns, key, language);
  const value: unknown = i18n.t(key, { ...params, lng: language, ns });
  if (typeof value !== "string" || value.trim() === "") throw missing(ns, key, language);
  return value;
}

export function listOf(i18n: i18n, ns: string, key: string, language: Language): string[] {
  if (!i18n.exists(key, { lng: language, ns })) throw missing(ns, key, language);
  const value: unknown = i18n.t(key, { lng: language, ns, returnObjects: true });
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
    throw new KnowledgeError(`text ${ns}:${key} in ${language} must be a list of strings`);
  }
  return value as string[];
}

/** Whether a key holds a plain string (not a level-nested object) in that language. */
export function isText(i18n: i18n, ns: string, key: string, language: Language): boolean {
  return typeof i18n.getResource(language, ns, key) === "string";
}

function missing(ns: string, key: string, language: Language): KnowledgeError {
  return new KnowledgeError(`missing text ${ns}:${key} in ${language}`);
}
