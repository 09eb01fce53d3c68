import { readFileSync } from "node:fs";
import path from "node:path";
import i18next from "i18next";
import { ROOT_DIR } from "../../../src/config.js";
import { LANGUAGES, type Language } from "../../../src/diagnosis/types.js";

/** Channel wording (help, menus, prompts) in the six languages, from locales/<lang>/channels.json. */
export type Texts = (language: Language, key: string, vars?: Record<string, string | number>) => string;

export function createTexts(localesDir = path.join(ROOT_DIR, "locales")): Texts {
  const resources = Object.fromEntries(
    LANGUAGES.map((lang) => [
      lang,
      { channels: JSON.parse(readFileSync(path.join(localesDir, lang, "channels.json"), "utf8")) },
    ]),
  );
  const i18n = i18next.createInstance();
  // Resources are in memory, so init completes synchronously (initAsync: false).
  void i18n.init({
    resources,
    ns: ["channels"],
    defaultNS: "channels",
    fallbackLng: "en",
    initAsync: false,
    interpolation: { escapeValue: false },
    returnNull: false,
  });
  const fixed = new Map(LANGUAGES.map((lang) => [lang, i18n.getFixedT(lang, "channels")]));
  return (language, key, vars) => {
    const t = fixed.get(language) ?? fixed.get("en")!;
    return String(t(key, vars ?? {}));
  };
}
