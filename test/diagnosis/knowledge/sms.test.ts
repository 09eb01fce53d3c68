import { describe, expect, it } from "vitest";
import { smsBudget, smsCore } from "../../../src/diagnosis/knowledge/sms-core.js";
import { LANGUAGES } from "../../../src/diagnosis/types.js";
import { SMS_SUMMARY_RESERVE } from "../../../src/limits.js";
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
    it.each(MODEL_CLASSES.filter((id) => texts[id]))(
      `%s fits in 3 segments with the summary's ${SMS_SUMMARY_RESERVE[language].units} units to spare`,
      (id) => {
        const entry = texts[id]!;
        const core = smsCore(entry.name, entry.simple);
        const budget = smsBudget(core, language);
        expect(budget.fits, `${language}:${id} (${budget.encoding}, ${budget.units} units): ${core}`).toBe(
          true,
        );
      },
    );
  });

  it("keeps the English core near 150 characters, so accented translations still fit in UCS-2", () => {
    const texts = readJson(localeFile("en", "diseases")) as Record<string, { name: string; simple: Simple }>;
    for (const id of MODEL_CLASSES) {
      const core = smsCore(texts[id]!.name, texts[id]!.simple);
      expect(smsBudget(core, "en").encoding, id).toBe("GSM-7");
      // Translations run 10-25 % longer than English, and UCS-2 leaves 3 x 67 units less the reserve.
      expect(core.length, `${id}: ${core}`).toBeLessThanOrEqual(160);
    }
  });

  it("counts the budget as the network does", () => {
    const en = SMS_SUMMARY_RESERVE.en;
    const fr = SMS_SUMMARY_RESERVE.fr;
    expect([en.encoding, fr.encoding]).toEqual(["GSM-7", "GSM-7"]);
    expect(smsBudget("a".repeat(3 * 153 - en.units), "en").fits).toBe(true);
    expect(smsBudget("a".repeat(3 * 153 - en.units + 1), "en").fits).toBe(false);
    expect(smsBudget("ê".repeat(3 * 67 - fr.units), "fr").fits).toBe(true); // ê is not GSM-7: UCS-2
    expect(smsBudget("ê".repeat(3 * 67 - fr.units + 1), "fr").fits).toBe(false);
    expect(smsCore("X", { description: "D.", immediate_actions: [] })).toBe("X. D. ");
  });

  it("counts a core in UCS-2 where the summary's own words need it, even when the core alone is GSM-7", () => {
    const reserve = { units: 40, encoding: "UCS-2" } as const;
    const room = 3 * 67 - reserve.units;
    expect(smsBudget("a".repeat(room), "es", reserve)).toMatchObject({ encoding: "UCS-2", fits: true });
    expect(smsBudget("a".repeat(room + 1), "es", reserve)).toMatchObject({ fits: false });
    expect(smsBudget("a".repeat(room + 1), "es", { ...reserve, encoding: "GSM-7" }).fits).toBe(true);
  });
});
