// Every knowledge-base entry, rendered as the SMS summary (the answer to a photo and to its code), in every
// language the knowledge base has: at most 3 segments, the part a farmer must get (name, description, first
// two actions: the knowledge base's SMS core) is never cut, and the tail offering the treatment closes it.
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { simpleKnowledge } from "../../channels/core/render/knowledge.js";
import { renderSmsSummary } from "../../channels/core/render/sms.js";
import { countSegments, plainPunctuation } from "../../channels/core/render/sms-segments.js";
import { createTexts } from "../../channels/core/render/texts.js";
import { asSentence, viewOf } from "../../channels/core/render/view.js";
import { ROOT_DIR } from "../../src/config.js";
import { createKnowledge } from "../../src/diagnosis/kb.js";
import { CLASS_IDS } from "../../src/diagnosis/knowledge/entries.js";
import { LANGUAGES } from "../../src/diagnosis/types.js";
import { resultFixture } from "./support/fixtures.js";

const kb = await createKnowledge();
const knowledge = simpleKnowledge(kb);
const t = createTexts();
const languages = LANGUAGES.filter((lang) =>
  existsSync(path.join(ROOT_DIR, "locales", lang, "diseases.json")),
);
const diseases = CLASS_IDS.filter((id) => !kb.isHealthy(id));

describe.each(languages)("SMS summary in %s", (language) => {
  it.each(diseases)("%s", (classId) => {
    const result = resultFixture();
    result.diagnoses[0]!.id = classId;
    result.diagnoses[0]!.confidence = 1; // "100%": the widest the renderer writes.
    const view = viewOf({ result, code: "K7M4QX", language, createdAt: "" }, language, knowledge);
    if (view.kind !== "diagnosis") throw new Error("expected a diagnosis view");
    const text = renderSmsSummary(view, language, t);

    expect(countSegments(text).segments).toBeLessThanOrEqual(3);
    expect(text.endsWith(`\n${t(language, "code_more", { code: "K7M4QX" })}`)).toBe(true);
    for (const part of [view.description, ...view.actions.slice(0, 2).map(asSentence)]) {
      expect(text).toContain(plainPunctuation(part));
    }
  });
});
