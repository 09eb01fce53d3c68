// The channel texts (locales/<lang>/channels.json): every key in every language, with the same
// placeholders, none empty. A text missing in one language is an error at run time, never English.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { renderSmsText } from "../../channels/core/render/sms.js";
import { createTexts } from "../../channels/core/render/texts.js";
import { FARMER_REPLIES } from "../../channels/limits.js";
import { ROOT_DIR } from "../../src/config.js";
import { LANGUAGES } from "../../src/diagnosis/types.js";
import { SMS_MAX_SEGMENTS } from "../../src/limits.js";
import { gsm7Letters, plainPunctuation } from "../../src/text/sms-segments.js";

type Tree = { [key: string]: string | Tree };
const read = (language: string) =>
  JSON.parse(readFileSync(path.join(ROOT_DIR, "locales", language, "channels.json"), "utf8")) as Tree;
const flatten = (tree: Tree, prefix = ""): [string, string][] =>
  Object.entries(tree).flatMap(([key, value]) =>
    typeof value === "string" ? [[`${prefix}${key}`, value]] : flatten(value, `${prefix}${key}.`),
  );
const placeholders = (text: string) => [...text.matchAll(/{{(\w+)}}/g)].map((m) => m[1]).sort();
const english = new Map(flatten(read("en")));

describe.each(LANGUAGES)("channel texts in %s", (language) => {
  const texts = new Map(flatten(read(language)));

  it("has every key of English and no other, none empty, with the same placeholders", () => {
    expect([...texts.keys()].sort()).toEqual([...english.keys()].sort());
    for (const [key, text] of texts) {
      expect(text.trim(), key).not.toBe("");
      expect(placeholders(text), key).toEqual(placeholders(english.get(key)!));
    }
  });

  it("reaches an SMS farmer whole: no sentence dropped to fit the segments", () => {
    const t = createTexts();
    // The longest values the placeholders take in replies.
    const vars = {
      code: "K7M4QX",
      name: "Kinyarwanda",
      yes: FARMER_REPLIES.helped,
      no: FARMER_REPLIES.wrong,
      refuse: FARMER_REPLIES.refusePhotos,
      channel: "WhatsApp",
    };
    for (const key of texts.keys()) {
      const text = t(language, key, vars);
      expect(gsm7Letters(renderSmsText(text, SMS_MAX_SEGMENTS)), key).toBe(
        gsm7Letters(plainPunctuation(text)),
      );
    }
  });

  it("is translated: no sentence left in English", () => {
    if (language === "en") return;
    for (const [key, text] of texts) {
      const words = text.replace(/{{\w+}}/g, "").match(/\p{L}{4,}/gu) ?? [];
      if (words.length > 1) expect(text, key).not.toBe(english.get(key));
    }
  });
});

it("a key no language has is an error, not a fallback to another language", () => {
  const t = createTexts();
  expect(() => t("sw", "no_such_text")).toThrow(/no channel text "no_such_text" in sw/);
});
