import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import i18next, { type i18n, type Resource } from "i18next";
import { ROOT_DIR } from "../../root-dir.js";
import { LANGUAGES } from "../types.js";
import { KnowledgeError } from "./entries.js";

/** `locales/` at the project root, found from this file so it works from any working directory. */
export const LOCALES_DIR = path.join(ROOT_DIR, "locales");

export const DISEASES_NS = "diseases";
export const NOTES_NS = "notes";

// Under vitest a missing text must fail the test that asked for it, not pass with a key name as text.
const IN_TESTS = process.env.VITEST !== undefined || process.env.NODE_ENV === "test";

/**
 * Every `locales/<lang>/<namespace>.json` of the service's languages, read synchronously: the files are
 * small and read once, and a broken file should fail start-up. A missing folder is simply a language
 * without texts (the completeness test reports it).
 */
export function loadResources(localesDir: string = LOCALES_DIR): Resource {
  const resources: Resource = {};
  for (const language of LANGUAGES) {
    const dir = path.join(localesDir, language);
    let files: string[];
    try {
      files = readdirSync(dir).filter((f) => f.endsWith(".json"));
    } catch {
      continue;
    }
    const namespaces: Record<string, unknown> = {};
    for (const file of files.sort()) {
      const text = readFileSync(path.join(dir, file), "utf8");
      try {
        namespaces[path.basename(file, ".json")] = JSON.parse(text);
      } catch (error) {
        throw new KnowledgeError(`${path.join(dir, file)}: invalid JSON (${(error as Error).message})`);
      }
    }
    resources[language] = namespaces as Resource[string];
  }
  return resources;
}

/** A dedicated i18next instance (never the global one, which other code may configure differently). */
export async function createI18n(options: { localesDir?: string } = {}): Promise<i18n> {
  const resources = loadResources(options.localesDir);
  const namespaces = [...new Set(Object.values(resources).flatMap((r) => Object.keys(r)))];
  const instance = i18next.createInstance();
  await instance.init({
    resources,
    lng: "en",
    supportedLngs: [...LANGUAGES],
    // A missing French text must never come out in English without anyone noticing: no fallback language.
    fallbackLng: false,
    ns: namespaces,
    defaultNS: DISEASES_NS,
    initAsync: false,
    // Texts go into JSON and SMS, not HTML: escaping would turn "d'eau" into "d&#39;eau".
    interpolation: { escapeValue: false },
    returnNull: false,
    returnEmptyString: false,
    saveMissing: IN_TESTS,
    saveMissingTo: "current",
    missingKeyHandler: (lngs, ns, key) => {
      throw new KnowledgeError(`missing text ${ns}:${key} for ${lngs.join(",")}`);
    },
    // A caller that forgets a value is a bug to catch in tests; in production a "?" reads better to a farmer
    // than a raw "{{confidence}}".
    missingInterpolationHandler: (text, value) => {
      if (IN_TESTS)
        throw new KnowledgeError(`missing interpolation value ${String(value?.[1] ?? value)} in "${text}"`);
      return "?";
    },
  });
  return instance;
}
