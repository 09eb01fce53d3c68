// Every knowledge-base entry, rendered as the SMS summary (the answer to a photo and to its code) and as an
// unsure answer naming it as the best guess, in every language the knowledge base has: at most 3 segments,
// the part a farmer must get is never cut, and the tail (how to get the treatment, or the code) closes it.
// The summary keeps the name with its likelihood, the description and the first two actions: the knowledge
// base's SMS core, which its texts keep within the room the summary leaves (limits.ts SMS_SUMMARY_RESERVE,
// measured here against what the renderer adds).
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { renderSmsSummary } from "../../channels/core/render/sms.js";
import { createTexts } from "../../channels/core/render/texts.js";
import { asSentence, viewOf } from "../../channels/core/render/view.js";
import { ROOT_DIR } from "../../src/config.js";
import { createKnowledge } from "../../src/diagnosis/kb.js";
import { CLASS_IDS } from "../../src/diagnosis/knowledge/entries.js";
import { smsCore } from "../../src/diagnosis/knowledge/sms-core.js";
import { LANGUAGES, type Language } from "../../src/diagnosis/types.js";
import { SMS_MAX_SEGMENTS, SMS_SUMMARY_RESERVE } from "../../src/limits.js";
import { newShortCode } from "../../src/results/short-code.js";
import {
  countSegments,
  countUnits,
  encodingOf,
  gsm7Letters,
  plainPunctuation,
} from "../../src/text/sms-segments.js";
import { resultFixture } from "./support/fixtures.js";

const kb = await createKnowledge();
const t = createTexts();
const languages = LANGUAGES.filter((lang) =>
  existsSync(path.join(ROOT_DIR, "locales", lang, "diseases.json")),
);
const diseases = CLASS_IDS.filter((id) => !kb.isHealthy(id));

describe.each(languages)("SMS in %s", (language) => {
  it.each(diseases)("%s: the summary", (classId) => {
    const result = resultFixture();
    result.diagnoses[0]!.id = classId;
    result.diagnoses[0]!.confidence = 1; // "very likely": the longest likelihood in most languages.
    const view = viewOf({ result, code: "K7M4QX", language, createdAt: "" }, language, kb);
    if (view.kind !== "diagnosis") throw new Error("expected a diagnosis view");
    const text = renderSmsSummary(view, language, t, SMS_MAX_SEGMENTS);

    expect(countSegments(text).segments).toBeLessThanOrEqual(3);
    expect(text.endsWith(`\n${t(language, "code_more", { code: "K7M4QX" })}`)).toBe(true);
    for (const part of [view.description, ...view.actions.slice(0, 2).map(asSentence)]) {
      expect(gsm7Letters(text)).toContain(gsm7Letters(plainPunctuation(part)));
    }
    // How urgent it is: every text of the knowledge base leaves room for it after the name.
    expect(gsm7Letters(text)).toContain(
      gsm7Letters(plainPunctuation(t(language, `urgency.${view.urgency}`))),
    );
  });

  it.each(CLASS_IDS)("%s as an unsure answer's best guess", (classId) => {
    const result = resultFixture({
      outcome: "unsure",
      crop_health: "unknown",
      diagnoses: [],
      candidates: [{ id: classId, name: classId, confidence: 0.4 }],
    });
    const view = viewOf({ result, code: "K7M4QX", language, createdAt: "" }, language, kb);
    const text = renderSmsSummary(view, language, t, SMS_MAX_SEGMENTS);

    expect(countSegments(text).segments).toBeLessThanOrEqual(3);
    const name = kb.name(classId, language);
    for (const part of [t(language, "unsure_guess", { name }), t(language, "better_photo")])
      expect(gsm7Letters(text)).toContain(gsm7Letters(plainPunctuation(part)));
    expect(text.endsWith(`\n${t(language, "code_line", { code: "K7M4QX" })}`)).toBe(true);
  });
});

describe("the room the knowledge base's SMS texts leave for the summary (limits.ts SMS_SUMMARY_RESERVE)", () => {
  // A core of plain letters, actions without their full stops: what is rendered around it is all addition.
  const core = smsCore("N", { description: "D.", immediate_actions: ["A", "B"] });
  const measure = (language: Language) => {
    const added = (["very_likely", "likely", "possibly"] as const).map((band) => {
      const view = viewOf(
        { result: resultFixture(), code: newShortCode(), language, createdAt: "" },
        language,
        kb,
      );
      if (view.kind !== "diagnosis") throw new Error("expected a diagnosis view");
      const only = { ...view, name: "N", band, description: "D.", actions: ["A", "B"], officer: false };
      // The urgency goes in only where the whole core fits with it: it is no part of the room kept for it.
      const urgency = `${t(language, `urgency.${only.urgency}`)} `;
      const text = renderSmsSummary(only, language, t, SMS_MAX_SEGMENTS).replace(urgency, "");
      const encoding = encodingOf(text);
      return { encoding, units: countUnits(text, encoding) - countUnits(core, encoding) };
    });
    return {
      units: Math.max(...added.map((a) => a.units)),
      encoding: added.some((a) => a.encoding === "UCS-2") ? "UCS-2" : "GSM-7",
    };
  };

  it("is what the renderer adds at most in each language, and whether its words need UCS-2", () => {
    const measured = Object.fromEntries(languages.map((language) => [language, measure(language)]));
    expect(SMS_SUMMARY_RESERVE).toEqual(measured);
  });
});
