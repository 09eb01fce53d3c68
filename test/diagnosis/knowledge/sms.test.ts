import { describe, expect, it } from "vitest";
import { smsBudget, smsCore } from "../../../src/diagnosis/knowledge/sms-core.js";
import { LANGUAGES } from "../../../src/diagnosis/types.js";
import { hasLocale, localeFile, MODEL_CLASSES, readJson } from "./support.js";

type Simple = { description: string; immediate_actions: string[] };
const present = LANGUAGES.filter((l) => hasLocale(l, "diseases"));

describe("SMS budget of the simple texts", () => {
  it("checks at least English", () => {
    expect(present).toContain("en");
  });

  describe.each(present)("%s", (language) => {
    const texts = readJson(localeFile(language, "diseases")) as Record<
      string,
      { name: string; simple: Simple }
    >;
    it.each(MODEL_CLASSES.filter((id) => texts[id]))("%s fits in 3 segments with 20 units to spare", (id) => {
      const entry = texts[id]!;
      const core = smsCore(entry.name, entry.simple);
      const budget = smsBudget(core);
      expect(budget.fits, `${language}:${id} (${budget.encoding}, ${budget.units} units): ${core}`).toBe(
        true,
      );
    });
  });

  it("keeps the English core near 150 characters, so accented translations still fit in UCS-2", () => {
    const texts = readJson(localeFile("en", "diseases")) as Record<string, { name: string; simple: Simple }>;
    for (const id of MODEL_CLASSES) {
      const core = smsCore(texts[id]!.name, texts[id]!.simple);
      expect(smsBudget(core).encoding, id).toBe("GSM-7");
      // UCS-2 leaves 3 x 67 - 20 = 181 units; translations run 10-25 % longer than English.
      expect(core.length, `${id}: ${core}`).toBeLessThanOrEqual(160);
    }
  });

  it("counts the budget as the network does", () => {
    expect(smsBudget("a".repeat(439)).fits).toBe(true); // 439 + 20 = 459 = 3 x 153
    expect(smsBudget("a".repeat(440)).fits).toBe(false);
    expect(smsBudget("é".repeat(0) + "ê".repeat(181)).fits).toBe(true); // ê is not GSM-7: UCS-2, 181 + 20 = 201
    expect(smsBudget("ê".repeat(182)).fits).toBe(false);
    expect(smsCore("X", { description: "D.", immediate_actions: [] })).toBe("X. D.  ");
  });
});
