import { readFileSync } from "node:fs";
import path from "node:path";
import i18next from "i18next";
import { ROOT_DIR } from "../config.js";
import { LANGUAGES, type Language } from "../diagnosis/types.js";

/** The console's interface text in one language (locales/<lang>/console.json). */
export type T = (key: string, vars?: Record<string, string | number>) => string;

export function createConsoleTexts(localesDir = path.join(ROOT_DIR, "locales")): (language: Language) => T {
  const resources = Object.fromEntries(
    LANGUAGES.map((lang) => [
      lang,
      { console: JSON.parse(readFileSync(path.join(localesDir, lang, "console.json"), "utf8")) },
    ]),
  );
  const i18n = i18next.createInstance();
  // A missing text shows its key, never another language: the locale tests keep every file complete.
  void i18n.init({
    resources,
    ns: ["console"],
    defaultNS: "console",
    fallbackLng: false,
    initAsync: false,
    interpolation: { escapeValue: false },
    returnNull: false,
  });
  const fixed = new Map(LANGUAGES.map((lang) => [lang, i18n.getFixedT(lang, "console")]));
  return (language) => {
    const t = fixed.get(language)!;
    return (key, vars) => String(t(key, vars ?? {}));
  };
}

/** The best of the six languages for a browser's Accept-Language header; English when none fits. */
export function languageFromAcceptLanguage(header: string | undefined): Language {
  const ranked = (header ?? "")
    .split(",")
    .map((part) => {
      const [tag = "", q] = part.trim().split(";q=");
      return { primary: tag.toLowerCase().split("-")[0] ?? "", q: q === undefined ? 1 : Number(q) };
    })
    .sort((a, b) => b.q - a.q);
  const found = ranked.find((r) => (LANGUAGES as readonly string[]).includes(r.primary));
  return (found?.primary as Language | undefined) ?? "en";
}
