import { readFileSync } from "node:fs";
import path from "node:path";
import i18next from "i18next";
import { ROOT_DIR } from "../../../src/config.js";
import { LANGUAGES, type Language } from "../../../src/diagnosis/types.js";
import { FARMER_REPLIES } from "../../limits.js";

/** Channel wording (help, menus, prompts) in the six languages, from locales/<lang>/channels.json. A key
 * missing in a language throws: a farmer never gets another language's words in its place. */
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
    // A text missing in one language is an error, never another language's words (see below).
    fallbackLng: false,
    initAsync: false,
    // The digits a farmer replies with are the same in every text that names them (channels/limits.ts).
    interpolation: {
      escapeValue: false,
      defaultVariables: {
        yes: FARMER_REPLIES.helped,
        no: FARMER_REPLIES.wrong,
        refuse: FARMER_REPLIES.refusePhotos,
        forget: FARMER_REPLIES.forget,
      },
    },
    returnNull: false,
  });
  return (language, key, vars) => {
    if (!i18n.exists(key, { lng: language })) throw new Error(`no channel text "${key}" in ${language}`);
    return String(i18n.t(key, { lng: language, ...vars }));
  };
}
