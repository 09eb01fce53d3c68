import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CLASS_IDS, getEntry } from "../../../src/diagnosis/knowledge/entries.js";
import { CROPS, DETAIL_LEVELS, LANGUAGES, QUALITY_ISSUES } from "../../../src/diagnosis/types.js";
import { hasLocale, LOCALES_DIR, localeFile, MODEL_CLASSES, readJson } from "./support.js";

// Every language must carry every text of the English template, with the same shape. A language whose
// translation is not in yet fails here on purpose: the service must not ship it half-translated.

const TEXT_KEYS = ["description"] as const;
const LIST_KEYS = [
  "immediate_actions",
  "recommended_products",
  "natural_alternatives",
  "prevention",
] as const;
// Words that are key names, never prose: a value made of them is a key left in place of a translation.
const KEY_NAMES = new Set([...TEXT_KEYS, ...LIST_KEYS, "name", ...DETAIL_LEVELS, ...MODEL_CLASSES]);

type Json = unknown;
const english = readJson(localeFile("en", "diseases")) as Record<string, Record<string, Json>>;
const englishNotes = readJson(localeFile("en", "notes")) as Record<string, Json>;

// English words that no other service language uses: one of them outside brackets means a sentence was left
// in English (a gloss such as "(leaf smut)" in brackets is deliberate and allowed). Letters, not \b, bound the
// words: \b would split "triazóis" at the accent and find "is".
const ENGLISH_WORDS = /(?<!\p{L})(the|and|with|which|should|your|this|that|from|is|are)(?!\p{L})/iu;
const withoutGlosses = (text: string) => text.replace(/\([^)]*\)/g, "");

/** Characters of one level's texts: its description and every list item. */
function levelLength(block: Record<string, Json>): number {
  return [block.description, ...LIST_KEYS.flatMap((k) => block[k] as Json[])].join("").length;
}

function isRecord(value: Json): value is Record<string, Json> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function expectProse(value: Json, where: string): void {
  expect(typeof value, `${where} is text`).toBe("string");
  const text = (value as string).trim();
  expect(text, `${where} is not empty`).not.toBe("");
  expect(KEY_NAMES.has(text), `${where} is a key name, not a text`).toBe(false);
  expect(/^[a-z0-9_]+(\.[a-z0-9_]+)+$/.test(text), `${where} looks like a key path`).toBe(false);
  expect(/__/.test(text), `${where} contains a class id`).toBe(false);
}

/** Paths of all leaves of a notes-like object, with arrays kept as leaves. */
function leaves(value: Json, prefix = ""): Map<string, Json> {
  const out = new Map<string, Json>();
  if (isRecord(value)) {
    for (const [k, v] of Object.entries(value))
      for (const [p, l] of leaves(v, prefix ? `${prefix}.${k}` : k)) out.set(p, l);
  } else out.set(prefix, value);
  return out;
}

describe("the English template covers the model", () => {
  it("has a knowledge-base entry and English texts for every model class, and nothing else", () => {
    expect([...CLASS_IDS].sort()).toEqual([...MODEL_CLASSES].sort());
    expect(Object.keys(english).sort()).toEqual([...MODEL_CLASSES].sort());
  });

  it("reads the model's classes from models/classes.json: crop-prefixed ids of the service's crops", () => {
    expect(MODEL_CLASSES.length).toBeGreaterThan(0);
    expect(MODEL_CLASSES).not.toContain("non_plant");
    expect(MODEL_CLASSES).not.toContain("other_plant");
    for (const id of MODEL_CLASSES) expect(CROPS, id).toContain(id.split("__")[0]);
  });

  it("has a locales/ folder for every service language, and no folder for a language the service lacks", () => {
    const folders = readdirSync(LOCALES_DIR, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
    expect(folders.sort()).toEqual([...LANGUAGES].sort());
  });

  it("gives every disease at least two simple actions (what SMS users get) and no empty advice list", () => {
    for (const id of MODEL_CLASSES) {
      const healthy = getEntry(id)?.healthy;
      for (const level of DETAIL_LEVELS) {
        const texts = english[id]?.[level] as Record<string, string[]>;
        if (healthy) {
          expect(texts.prevention?.length, `${id}.${level}.prevention`).toBeGreaterThan(0);
          continue;
        }
        expect(texts.immediate_actions?.length, `${id}.${level}.immediate_actions`).toBeGreaterThanOrEqual(
          level === "simple" ? 2 : 1,
        );
        for (const key of LIST_KEYS) expect(texts[key]?.length, `${id}.${level}.${key}`).toBeGreaterThan(0);
      }
    }
  });

  it("has the notes the core asks for", () => {
    const paths = [...leaves(englishNotes).keys()];
    for (const key of [
      "unsure",
      "better_photo",
      "crop_mismatch",
      "region_narrowed",
      "region_unknown",
      "healthy",
      "not_plant",
      "no_model",
    ]) {
      for (const level of DETAIL_LEVELS) expect(paths, `${key}.${level}`).toContain(`${key}.${level}`);
    }
    // The same for every reader: which crops we cover.
    for (const key of ["crop_unsupported", "crop_not_supported"]) expect(paths).toContain(key);
    for (const issue of QUALITY_ISSUES) expect(paths).toContain(`quality.${issue}`);
    for (const crop of CROPS) expect(paths).toContain(`crops.${crop}`);
  });
});

describe.each(LANGUAGES)("texts in %s", (language) => {
  it(`has locales/${language}/diseases.json with every class, level and key of the English template`, () => {
    expect(hasLocale(language, "diseases"), `locales/${language}/diseases.json exists`).toBe(true);
    const texts = readJson(localeFile(language, "diseases")) as Record<string, Record<string, Json>>;
    expect(Object.keys(texts).sort()).toEqual([...MODEL_CLASSES].sort());
    for (const id of MODEL_CLASSES) {
      const entry = texts[id];
      expect(isRecord(entry), `${id} is an object`).toBe(true);
      expect(Object.keys(entry!).sort(), `${id} keys`).toEqual(["expert", "name", "simple", "standard"]);
      expectProse(entry!.name, `${language}:${id}.name`);
      for (const level of DETAIL_LEVELS) {
        const block = entry![level];
        expect(isRecord(block), `${id}.${level} is an object`).toBe(true);
        const b = block as Record<string, Json>;
        expect(Object.keys(b).sort(), `${id}.${level} keys`).toEqual([...TEXT_KEYS, ...LIST_KEYS].sort());
        expectProse(b.description, `${language}:${id}.${level}.description`);
        for (const key of LIST_KEYS) {
          const where = `${language}:${id}.${level}.${key}`;
          expect(Array.isArray(b[key]), `${where} is a list`).toBe(true);
          const englishList = (english[id]![level] as Record<string, Json[]>)[key]!;
          // A translation says the same things: same number of items, so none is dropped or invented.
          expect((b[key] as Json[]).length, `${where} has as many items as English`).toBe(englishList.length);
          for (const [i, item] of (b[key] as Json[]).entries()) expectProse(item, `${where}[${i}]`);
        }
      }
    }
  });

  it(`has locales/${language}/notes.json with every note of the English template`, () => {
    expect(hasLocale(language, "notes"), `locales/${language}/notes.json exists`).toBe(true);
    const notes = leaves(readJson(localeFile(language, "notes")));
    for (const [path, englishText] of leaves(englishNotes)) {
      expect(notes.has(path), `${language}:notes.${path}`).toBe(true);
      expectProse(notes.get(path), `${language}:notes.${path}`);
      // The interpolation placeholders are code, not prose: they must survive translation unchanged.
      const placeholders = (text: Json) =>
        [...String(text).matchAll(/{{\s*(\w+)\s*}}/g)].map((m) => m[1]).sort();
      expect(placeholders(notes.get(path)), `${language}:notes.${path} placeholders`).toEqual(
        placeholders(englishText),
      );
    }
  });

  it("makes the levels differ for real: simple shortest, expert longest, in description and in all", () => {
    const texts = readJson(localeFile(language, "diseases")) as Record<string, Record<string, Json>>;
    for (const id of MODEL_CLASSES) {
      const block = (level: string) => texts[id]![level] as Record<string, Json>;
      const description = (level: string) => String(block(level).description).length;
      const where = `${language}:${id}`;
      expect(description("simple"), where).toBeLessThan(description("standard"));
      expect(description("standard"), where).toBeLessThan(description("expert"));
      expect(levelLength(block("simple")), where).toBeLessThan(levelLength(block("standard")));
      expect(levelLength(block("standard")), where).toBeLessThan(levelLength(block("expert")));
      if (getEntry(id)?.healthy) continue;
      // Expert adds taxonomy: a family, order, phylum or virus family name in its description.
      expect(String(block("expert").description), `${where} expert names a higher taxon`).toMatch(
        /\b[A-Z][a-z]+(aceae|idae|viridae|ales|mycota|mycetes)\b/,
      );
    }
  });

  it.skipIf(language === "en")("leaves no name, description, list item or note in English", () => {
    const texts = readJson(localeFile(language, "diseases")) as Record<string, Record<string, Json>>;
    for (const id of MODEL_CLASSES) {
      const pairs: [string, Json, Json][] = [[`${id}.name`, texts[id]!.name, english[id]!.name]];
      for (const level of DETAIL_LEVELS) {
        const b = texts[id]![level] as Record<string, Json>;
        const e = english[id]![level] as Record<string, Json>;
        pairs.push([`${id}.${level}.description`, b.description, e.description]);
        for (const key of LIST_KEYS) {
          for (const [i, item] of (b[key] as Json[]).entries())
            pairs.push([`${id}.${level}.${key}[${i}]`, item, (e[key] as Json[])[i]]);
        }
      }
      for (const [where, text, englishText] of pairs) {
        expect(text, `${language}:${where} is translated`).not.toBe(englishText);
        expect(withoutGlosses(String(text)), `${language}:${where} reads as English`).not.toMatch(
          ENGLISH_WORDS,
        );
      }
    }
    const notes = leaves(readJson(localeFile(language, "notes")));
    for (const [path, englishText] of leaves(englishNotes)) {
      // Crop names may coincide across languages ("tomate"); every sentence must not.
      if (path.startsWith("crops.")) continue;
      expect(notes.get(path), `${language}:notes.${path} is translated`).not.toBe(englishText);
      expect(
        withoutGlosses(String(notes.get(path))),
        `${language}:notes.${path} reads as English`,
      ).not.toMatch(ENGLISH_WORDS);
    }
  });
});
