import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { i18n as I18n } from "i18next";
import { beforeAll, describe, expect, it } from "vitest";
import { createI18n } from "../../../src/diagnosis/knowledge/i18n.js";
import {
  describe as describeClass,
  higherUrgency,
  treatment,
} from "../../../src/diagnosis/knowledge/lookup.js";
import { localeFile, readJson } from "./support.js";

let i18n: I18n;
const en = readJson(localeFile("en", "diseases")) as Record<string, Record<string, Record<string, string[]>>>;

beforeAll(async () => {
  i18n = await createI18n();
});

describe("describe", () => {
  it("returns the translated diagnosis fields with the facts of diseases.json", () => {
    const d = describeClass("potato__late_blight", "en", "standard", i18n);
    expect(d).toMatchObject({
      id: "potato__late_blight",
      scientific_name: "Phytophthora infestans",
      eppo_code: "PHYTIN",
      name: "Potato late blight",
      category: "oomycete",
      urgency: "critical",
      affected_parts: ["leaves", "stems", "tubers"],
    });
    expect(d.description).toContain("oomycete");
    expect(d.reference_images.length).toBeGreaterThan(0);
    expect(d).not.toHaveProperty("confidence");
  });

  it("gives a different description at each level", () => {
    const [s, st, ex] = (["simple", "standard", "expert"] as const).map(
      (level) => describeClass("tomato__septoria_leaf_spot", "en", level, i18n).description,
    );
    expect(new Set([s, st, ex]).size).toBe(3);
    expect(ex).toContain("Septoria lycopersici");
  });

  it("refuses healthy and unknown classes", () => {
    expect(() => describeClass("tomato__healthy", "en", "simple", i18n)).toThrow(/healthy/);
    expect(() => describeClass("cassava__mosaic", "en", "simple", i18n)).toThrow(/no knowledge-base entry/);
    expect(() => describeClass("non_plant", "en", "simple", i18n)).toThrow();
  });
});

describe("treatment", () => {
  it("is one class's advice as written, with its urgency", () => {
    const t = treatment(["tomato__early_blight"], "en", "simple", i18n);
    expect(t.immediate_actions).toEqual(en.tomato__early_blight!.simple!.immediate_actions);
    expect(t.prevention).toEqual(en.tomato__early_blight!.simple!.prevention);
    expect(t.urgency).toBe("moderate");
  });

  it("merges several diagnoses in order, without repeating shared advice, at the highest urgency", () => {
    const t = treatment(
      ["tomato__early_blight", "tomato__late_blight", "tomato__septoria_leaf_spot"],
      "en",
      "standard",
      i18n,
    );
    const early = en.tomato__early_blight!.standard!;
    const late = en.tomato__late_blight!.standard!;
    expect(t.immediate_actions.slice(0, early.immediate_actions!.length)).toEqual(early.immediate_actions);
    for (const item of late.immediate_actions!) expect(t.immediate_actions).toContain(item);
    for (const key of [
      "immediate_actions",
      "recommended_products",
      "natural_alternatives",
      "prevention",
    ] as const) {
      expect(new Set(t[key]).size, key).toBe(t[key].length);
    }
    expect(t.urgency).toBe("critical");
  });

  it("de-duplicates identical advice (tomato and pepper bacterial spot share most of it)", () => {
    const one = treatment(["tomato__bacterial_spot"], "en", "simple", i18n);
    const both = treatment(["tomato__bacterial_spot", "pepper__bacterial_spot"], "en", "simple", i18n);
    expect(both.immediate_actions).toEqual(one.immediate_actions);
    expect(both.urgency).toBe("high");
  });

  it("has no urgency for a healthy plant but still gives prevention", () => {
    const t = treatment(["maize__healthy"], "en", "simple", i18n);
    expect(t.urgency).toBeNull();
    expect(t.immediate_actions).toEqual([]);
    expect(t.prevention.length).toBeGreaterThan(0);
    expect(treatment([], "en", "simple", i18n).urgency).toBeNull();
  });

  it("ignores a healthy class when ranking urgency", () => {
    expect(treatment(["maize__healthy", "maize__common_rust"], "en", "simple", i18n).urgency).toBe("low");
  });

  it("orders urgencies low < moderate < high < critical", () => {
    expect(higherUrgency(null, "low")).toBe("low");
    expect(higherUrgency("high", "moderate")).toBe("high");
    expect(higherUrgency("high", "critical")).toBe("critical");
  });
});

describe("missing texts", () => {
  it("throw instead of falling back to English or to the key", async () => {
    // A locales folder with English only: French is asked for and is not there.
    const dir = mkdtempSync(path.join(tmpdir(), "kb-locales-"));
    mkdirSync(path.join(dir, "en"));
    writeFileSync(path.join(dir, "en", "diseases.json"), JSON.stringify(en));
    const englishOnly = await createI18n({ localesDir: dir });
    expect(describeClass("bean__rust", "en", "simple", englishOnly).name).toBe("Bean rust");
    expect(() => describeClass("bean__rust", "fr", "simple", englishOnly)).toThrow(
      /missing text diseases:bean__rust.name in fr/,
    );
    expect(() => treatment(["bean__rust"], "fr", "simple", englishOnly)).toThrow(/in fr/);
  });
});
