import { describe, expect, it } from "vitest";
import { getEntry } from "../../../src/diagnosis/knowledge/entries.js";
import { localeFile, MODEL_CLASSES, readJson } from "./support.js";

// Advice that puts a pesticide in a farmer's hands carries its safety line, at every level that tells them to
// spray. Checked on the English template: completeness.test.ts keeps every language's lists the same length,
// so a translation carries the line in the same place.

type Level = { description: string; immediate_actions: string[]; recommended_products: string[] } & Record<
  string,
  unknown
>;
type Texts = Record<string, { simple: Level; standard: Level; expert: Level } & Record<string, unknown>>;
const english = readJson(localeFile("en", "diseases")) as Texts;
const diseases = MODEL_CLASSES.filter((id) => !getEntry(id)?.healthy);

// "Spray ...", "Use a mite killer": an instruction to apply a product (not "Do not buy a spray").
const SPRAYS = /^(Spray|Repeat the spray|Use a mite killer)\b/;

describe("safety of spray advice (English template)", () => {
  it("ends the simple actions with gloves, long sleeves, a mask and the pre-harvest wait wherever they say to spray", () => {
    const spraying = diseases.filter((id) =>
      english[id]!.simple.immediate_actions.some((a) => SPRAYS.test(a)),
    );
    expect(spraying.length).toBeGreaterThanOrEqual(10);
    for (const id of spraying) {
      const actions = english[id]!.simple.immediate_actions;
      const last = actions[actions.length - 1]!;
      expect(last, id).toMatch(/gloves/);
      expect(last, id).toMatch(/mask/);
      expect(last, id).toMatch(/before harvest/);
      // The safety line comes after the advice, so the SMS core (the first two actions) is the advice itself.
      expect(actions.length, id).toBeGreaterThanOrEqual(3);
    }
  });

  it("names protective equipment and the pre-harvest interval in the standard and expert label advice", () => {
    // The mosaic virus's only products are disinfectants for tools: nothing is sprayed on the crop.
    for (const id of diseases.filter((d) => d !== "tomato__mosaic_virus")) {
      for (const level of ["standard", "expert"] as const) {
        const label = english[id]![level].recommended_products.filter((p) => /follow the label/i.test(p));
        expect(label.length, `${id}.${level}`).toBe(1);
        expect(label[0], `${id}.${level}`).toMatch(/protective equipment|gloves/);
      }
      const standard = english[id]!.standard.recommended_products.find((p) => /follow the label/i.test(p));
      if (standard) expect(standard, id).toMatch(/pre-harvest interval/);
    }
  });

  it("warns that sulphur burns leaves in the heat wherever it is recommended to bean growers", () => {
    const rust = english.bean__rust!;
    expect(rust.simple.immediate_actions.join(" ")).toMatch(
      /sulphur[^.]*\. Do not spray sulphur in the midday heat/,
    );
    const wettable = (rust.standard.natural_alternatives as string[]).find((a) => /sulphur/i.test(a));
    expect(wettable).toMatch(/30 °C/);
  });

  it("times maize sprays from tasseling to silking at every level", () => {
    for (const id of ["maize__common_rust", "maize__gray_leaf_spot", "maize__northern_leaf_blight"]) {
      const e = english[id]!;
      expect(e.simple.immediate_actions.join(" "), id).toMatch(/when the tassels and silks come out/);
      expect(e.standard.immediate_actions.join(" "), id).toMatch(/between tasseling and silking/);
      expect(e.expert.immediate_actions.join(" "), id).toMatch(/VT-R1/);
      for (const level of ["simple", "standard"] as const)
        expect(e[level].immediate_actions.join(" "), `${id}.${level}`).not.toMatch(
          /before the tassels|around tasseling/,
        );
    }
  });

  it("states the Hutton criteria as published: two days at 10 °C minimum, 6 h at 90 % RH or more each day", () => {
    for (const language of ["en", "fr", "sw", "es", "pt", "it"]) {
      const texts = readJson(localeFile(language, "diseases")) as Texts;
      const description = texts.potato__late_blight!.expert.description;
      expect(description, language).toMatch(/Hutton/);
      expect(description, language).toMatch(/\b6 h\b|saa 6\b/);
      expect(description, language).not.toMatch(/\b11 h\b|saa 11\b/);
    }
  });
});
