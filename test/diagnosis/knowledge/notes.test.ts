import type { i18n as I18n } from "i18next";
import { beforeAll, describe, expect, it } from "vitest";
import { createI18n } from "../../../src/diagnosis/knowledge/i18n.js";
import { CLASS_DESCRIPTION_NOTE, note } from "../../../src/diagnosis/knowledge/notes.js";
import { CROPS, DETAIL_LEVELS, QUALITY_ISSUES } from "../../../src/diagnosis/types.js";
import { localeFile, readJson } from "./support.js";

let i18n: I18n;
beforeAll(async () => {
  i18n = await createI18n();
});

describe("notes", () => {
  it("interpolates values, without HTML escaping", () => {
    const text = note("crop_mismatch", "en", "simple", { given: "maize", detected: "tomato" }, i18n);
    expect(text).toContain("maize");
    expect(text).toContain("tomato");
    expect(text).not.toMatch(/{{|}}/);
    const region = note("region_unknown", "en", "standard", { region: "Côte d'Ivoire & co" }, i18n);
    expect(region).toContain("Côte d'Ivoire & co");
    const unsure = note("unsure", "en", "standard", { name: "Tomato late blight", confidence: "42" }, i18n);
    expect(unsure).toContain("42%");
    expect(unsure).toContain("Possibly: Tomato late blight");
    expect(
      note(
        "region_narrowed",
        "en",
        "expert",
        { region: "Italia", excluded: "Rice bacterial leaf blight" },
        i18n,
      ),
    ).toContain("Rice bacterial leaf blight");
  });

  it("picks the reader's level where the note is written per level", () => {
    const texts = DETAIL_LEVELS.map((level) => note("healthy", "en", level, {}, i18n));
    expect(new Set(texts).size).toBe(3);
  });

  it("uses one text for every level where the note does not depend on it", () => {
    for (const issue of QUALITY_ISSUES) {
      const texts = DETAIL_LEVELS.map((level) => note(`quality.${issue}`, "en", level, {}, i18n));
      expect(new Set(texts).size, issue).toBe(1);
      expect(texts[0], issue).not.toContain("quality");
    }
    for (const crop of CROPS) expect(note(`crops.${crop}`, "en", "expert", {}, i18n)).toBe(crop);
    expect(note("no_model", "en", "simple", {}, i18n)).toBeTruthy();
    expect(note("not_plant", "en", "expert", {}, i18n)).toBeTruthy();
  });

  it("reads a class's own description as a note, at the reader's level and in the reader's language", () => {
    const en = readJson(localeFile("en", "diseases")) as Record<
      string,
      Record<string, { description: string }>
    >;
    const sw = readJson(localeFile("sw", "diseases")) as Record<
      string,
      Record<string, { description: string }>
    >;
    for (const level of DETAIL_LEVELS) {
      expect(note(CLASS_DESCRIPTION_NOTE, "en", level, { classId: "tomato__healthy" }, i18n)).toBe(
        en.tomato__healthy![level]!.description,
      );
      expect(note(CLASS_DESCRIPTION_NOTE, "sw", level, { classId: "tomato__healthy" }, i18n)).toBe(
        sw.tomato__healthy![level]!.description,
      );
    }
    expect(() => note(CLASS_DESCRIPTION_NOTE, "en", "simple", { classId: "cassava__healthy" }, i18n)).toThrow(
      /missing text diseases:cassava__healthy/,
    );
  });

  it("names the crop we do not cover and the ones we do, the same for every reader", () => {
    const params = { given: "cassava", crops: "bean and rice" };
    const texts = DETAIL_LEVELS.map((level) => note("crop_unsupported", "en", level, params, i18n));
    expect(new Set(texts).size).toBe(1);
    expect(texts[0]).toContain("cassava");
    expect(texts[0]).toContain("bean and rice");
    const other = note("crop_not_supported", "en", "simple", { crops: "bean and rice" }, i18n);
    expect(other).toContain("bean and rice");
    expect(other).not.toBe(texts[0]);
  });

  it("throws on an unknown note, and on a missing value while testing", () => {
    expect(() => note("nonexistent", "en", "simple", {}, i18n)).toThrow(
      /missing text notes:nonexistent in en/,
    );
    expect(() => note("unsure", "en", "standard", {}, i18n)).toThrow(/confidence/);
  });
});
