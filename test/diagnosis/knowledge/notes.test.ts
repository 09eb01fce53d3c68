import type { i18n as I18n } from "i18next";
import { beforeAll, describe, expect, it } from "vitest";
import { createI18n } from "../../../src/diagnosis/knowledge/i18n.js";
import { note } from "../../../src/diagnosis/knowledge/notes.js";
import { CROPS, DETAIL_LEVELS, QUALITY_ISSUES } from "../../../src/diagnosis/types.js";

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
    expect(note("unsure", "en", "simple", { confidence: "42" }, i18n)).toContain("42%");
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

  it("throws on an unknown note, and on a missing value while testing", () => {
    expect(() => note("nonexistent", "en", "simple", {}, i18n)).toThrow(
      /missing text notes:nonexistent in en/,
    );
    expect(() => note("unsure", "en", "standard", {}, i18n)).toThrow(/confidence/);
  });
});
