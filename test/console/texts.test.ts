import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT_DIR } from "../../src/config.js";
import { languageFromAcceptLanguage } from "../../src/console/texts.js";
import { LANGUAGES } from "../../src/diagnosis/types.js";
import { CONSOLE_DOC, withConsoleTable } from "../../src/limits-docs.js";

type Tree = { [key: string]: string | Tree };

function flatten(tree: Tree, prefix = ""): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, value] of Object.entries(tree)) {
    if (typeof value === "string") out.set(`${prefix}${key}`, value);
    else for (const [k, v] of flatten(value, `${prefix}${key}.`)) out.set(k, v);
  }
  return out;
}

const load = async (lang: string) =>
  flatten(JSON.parse(await readFile(path.join(ROOT_DIR, "locales", lang, "console.json"), "utf8")) as Tree);

describe("the console's texts", () => {
  it("exist in all six languages, with the same keys and the same placeholders", async () => {
    const english = await load("en");
    const vars = (text: string) => [...text.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]).sort();
    for (const lang of LANGUAGES) {
      const texts = await load(lang);
      expect([...texts.keys()].sort(), lang).toEqual([...english.keys()].sort());
      for (const [key, text] of texts) expect(vars(text), `${lang} ${key}`).toEqual(vars(english.get(key)!));
    }
  });

  it("are translated: only names and words the languages share may read as in English", async () => {
    // Words these languages write as English does ("Standard", "Photo", "min", "h", "Password" in Italian).
    const shared = new Set([
      "diagnose.levels.standard",
      "diagnose.levels.expert",
      "lookup.photo",
      "lookup.text",
      "ago.minutes",
      "ago.hours",
      "sign_in.password",
      "source.console",
    ]);
    const english = await load("en");
    for (const lang of LANGUAGES.filter((l) => l !== "en")) {
      const same = [...(await load(lang))]
        .filter(([key, text]) => text === english.get(key) && !shared.has(key))
        // Channel names are the same everywhere.
        .filter(([key]) => !/^source\.(whatsapp|mms|sms|telegram|ussd)$/.test(key));
      expect(
        same.map(([key]) => key),
        lang,
      ).toEqual([]);
    }
  });

  it("follow the browser's language on a first visit", () => {
    expect(languageFromAcceptLanguage("sw-KE,sw;q=0.9,en;q=0.8")).toBe("sw");
    expect(languageFromAcceptLanguage("de-DE,de;q=0.9,pt-BR;q=0.8")).toBe("pt");
    expect(languageFromAcceptLanguage("de-DE")).toBe("en");
    expect(languageFromAcceptLanguage(undefined)).toBe("en");
  });

  it("document the rules of src/limits.ts in docs/console.md (npm run docs:limits)", async () => {
    const doc = await readFile(CONSOLE_DOC, "utf8");
    expect(withConsoleTable(doc)).toBe(doc);
  });
});
