import { readFileSync } from "node:fs";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Diagnoser } from "../../src/diagnosis/diagnoser.js";
import { createKnowledge, type Knowledge } from "../../src/diagnosis/kb.js";
import { assembleResult, type ModelVerdict } from "../../src/diagnosis/result.js";
import { DETAIL_LEVELS, type DetailLevel, LANGUAGES, type Language } from "../../src/diagnosis/types.js";
import { testApp } from "./support/app.js";
import { multipartBody } from "./support/form.js";

// A request in each language must come back in that language end to end: through the form parsing, the
// core's result assembly and the knowledge base, to the JSON body. The texts are checked against the
// locales/ files themselves, not against the code that reads them.

type Level = Record<string, string | string[]>;
type Entry = { name: string } & Record<DetailLevel, Level>;
/** Notes by key: per level, or one text for every reader (the crop names, the unsupported-crop notes). */
type NotesFile = Record<string, Record<string, string>> & { crop_unsupported: string };

const LOCALES = new URL("../../locales/", import.meta.url);
const read = (language: string, ns: string): unknown =>
  JSON.parse(readFileSync(new URL(`${language}/${ns}.json`, LOCALES), "utf8"));
const diseases = (language: string) => read(language, "diseases") as Record<string, Entry>;
const notes = (language: string) => read(language, "notes") as NotesFile;

const LISTS = ["immediate_actions", "recommended_products", "natural_alternatives", "prevention"] as const;
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);

/**
 * TEST DOUBLE for the model only: a fixed verdict per request keeps the diagnosis deterministic (the committed
 * model's answer to a synthetic photo is not), while the knowledge base and result assembly are the real ones.
 */
class FixedVerdictDiagnoser implements Diagnoser {
  verdict: Record<string, number> = {};
  constructor(private readonly kb: Knowledge) {}

  async diagnose(_image: Buffer, context: Parameters<Diagnoser["diagnose"]>[1], requestId: string) {
    const model: ModelVerdict = {
      probabilities: new Map(Object.entries(this.verdict)),
      otherCrop: false,
      unsureThreshold: 0.5,
      boxes: () => [],
    };
    return assembleResult({ requestId, context, isPlant: true, qualityIssue: null, model }, this.kb);
  }

  modelReady() {
    return true;
  }

  async close() {}
}

let app: FastifyInstance;
let diagnoser: FixedVerdictDiagnoser;
let ip = 0;

beforeAll(async () => {
  diagnoser = new FixedVerdictDiagnoser(await createKnowledge());
  ({ app } = await testApp({ deps: { diagnoser } }));
});
afterAll(() => app.close());

async function post(fields: Record<string, string>) {
  const { payload, headers } = await multipartBody(fields, { data: JPEG });
  // One client address per request: the anonymous rate limit must not interfere.
  const res = await app.inject({
    method: "POST",
    url: "/diagnosis/",
    payload,
    headers,
    remoteAddress: `10.9.0.${++ip}`,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

const interpolate = (text: string, params: Record<string, string>) =>
  text.replace(/{{\s*(\w+)\s*}}/g, (_, key: string) => params[key] ?? `{{${key}}}`);

/** The merged plan the answer must carry: each diagnosis's items in order, each item once. */
function expectedPlan(texts: Record<string, Entry>, ids: string[], level: DetailLevel) {
  return Object.fromEntries(
    LISTS.map((key) => [key, [...new Set(ids.flatMap((id) => texts[id]![level][key] as string[]))]]),
  );
}

const cases = LANGUAGES.flatMap((language) => DETAIL_LEVELS.map((level) => [language, level] as const));

describe.each(cases)("POST /diagnosis/ with language=%s, detail_level=%s", (language: Language, level) => {
  const texts = diseases(language);
  const english = diseases("en");
  const notesOf = notes(language);

  it("names and describes the diseases, plans the treatment and adds the notes in that language", async () => {
    const ids = ["tomato__late_blight", "tomato__early_blight"];
    diagnoser.verdict = { tomato__late_blight: 0.7, tomato__early_blight: 0.25, tomato__healthy: 0.05 };
    const body = await post({ language, detail_level: level });

    expect(body.diagnoses.map((d: { id: string }) => d.id)).toEqual(ids);
    for (const [i, id] of ids.entries()) {
      expect(body.diagnoses[i].name).toBe(texts[id]!.name);
      expect(body.diagnoses[i].description).toBe(texts[id]![level].description);
      if (language !== "en") {
        expect(body.diagnoses[i].name).not.toBe(english[id]!.name);
        expect(body.diagnoses[i].description).not.toBe(english[id]![level].description);
      }
    }
    const plan = expectedPlan(texts, ids, level);
    for (const key of LISTS) {
      expect(body.treatment[key], key).toEqual(plan[key]);
      if (language !== "en") {
        const englishItems = new Set(expectedPlan(english, ids, level)[key]);
        for (const item of body.treatment[key]) expect(englishItems.has(item), item).toBe(false);
      }
    }
  });

  it("answers a crop we do not cover by naming it and the crops we cover, in that language", async () => {
    diagnoser.verdict = { tomato__late_blight: 0.7, tomato__early_blight: 0.25, tomato__healthy: 0.05 };
    const body = await post({ language, detail_level: level, crop_type: "cassava" });
    expect([body.outcome, body.crop_health, body.diagnoses]).toEqual(["crop_not_supported", "unknown", []]);
    const crops = new Intl.ListFormat(language, { type: "conjunction" }).format(
      ["bean", "maize", "pepper", "potato", "rice", "tomato"].map((crop) => notesOf.crops![crop]!),
    );
    const text = notesOf.crop_unsupported;
    expect(body.additional_notes).toBe(interpolate(text, { given: "cassava", crops }));
    if (language !== "en")
      expect(body.additional_notes).not.toBe(
        interpolate(notes("en").crop_unsupported, { given: "cassava", crops }),
      );
  });

  it("reassures about a healthy plant with its crop's own text and the language's caveat", async () => {
    diagnoser.verdict = { tomato__healthy: 0.9, tomato__late_blight: 0.1 };
    const body = await post({ language, detail_level: level });

    expect(body.crop_health).toBe("healthy");
    expect(body.diagnoses).toEqual([]);
    expect(body.treatment.prevention).toEqual(texts.tomato__healthy![level].prevention);
    expect(body.additional_notes).toBe(
      `${texts.tomato__healthy![level].description} ${notesOf.healthy![level]}`,
    );
    if (language !== "en") {
      expect(body.additional_notes).not.toContain(english.tomato__healthy![level].description as string);
    }
  });
});
