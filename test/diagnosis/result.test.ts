import { beforeAll, describe, expect, it } from "vitest";
import { createKnowledge, type Knowledge } from "../../src/diagnosis/kb.js";
import { CLASS_IDS } from "../../src/diagnosis/knowledge/entries.js";
import { assembleResult, type ModelVerdict } from "../../src/diagnosis/result.js";
import type { DiagnosisContext, QualityIssue } from "../../src/diagnosis/types.js";

const context = (extra: Partial<DiagnosisContext> = {}): DiagnosisContext => ({
  language: "en",
  detailLevel: "standard",
  includeBbox: false,
  ...extra,
});

/** A model verdict with the given probabilities and boxes that name each class's condition. */
function verdict(probabilities: Record<string, number>, otherCrop = false): ModelVerdict {
  return {
    probabilities: new Map(Object.entries(probabilities)),
    otherCrop,
    unsureThreshold: 0.6,
    boxes: (id) => [{ name: id.split("__")[1]!, bbox: [0.1, 0.2, 0.3, 0.4], confidence: probabilities[id]! }],
  };
}

describe("result assembly (the rules between the model's probabilities and the answer)", () => {
  let kb: Knowledge;
  beforeAll(async () => {
    kb = await createKnowledge();
  });
  const assess = (
    model: ModelVerdict | null,
    extra: Partial<DiagnosisContext> = {},
    isPlant = true,
    qualityIssue: QualityIssue | null = null,
  ) => assembleResult({ requestId: "r", context: context(extra), isPlant, qualityIssue, model }, kb);

  it("names the top disease and others above the floor, never a healthy class, at most three", () => {
    const result = assess(
      verdict({
        tomato__late_blight: 0.62,
        tomato__healthy: 0.2,
        tomato__early_blight: 0.16,
        tomato__leaf_mold: 0.02,
      }),
    );
    expect(result.crop_health).toBe("unhealthy");
    expect(result.diagnoses.map((d) => d.id)).toEqual(["tomato__late_blight", "tomato__early_blight"]);
    expect(result.diagnoses.map((d) => d.confidence)).toEqual([0.62, 0.16]);
    expect(result.treatment.urgency).toBe(kb.describe("tomato__late_blight", "en", "standard").urgency);
    expect(result.treatment.immediate_actions.length).toBeGreaterThan(0);
    expect(result.detections).toBeNull();
    expect(result.error).toBeNull();
  });

  it("gives boxes of the named diseases only when asked", () => {
    const result = assess(verdict({ potato__late_blight: 0.9, potato__healthy: 0.1 }), { includeBbox: true });
    expect(result.detections).toEqual([{ name: "late_blight", bbox: [0.1, 0.2, 0.3, 0.4], confidence: 0.9 }]);
  });

  it("reports a healthy plant with prevention advice and no urgency", () => {
    const result = assess(verdict({ maize__healthy: 0.8, maize__common_rust: 0.2 }));
    expect(result.crop_health).toBe("healthy");
    expect(result.diagnoses).toEqual([]);
    expect(result.treatment.urgency).toBeNull();
    expect(result.treatment.prevention.length).toBeGreaterThan(0);
    // The crop's own reassurance from its healthy entry, then what one photo cannot show.
    const own = kb.note(
      { key: "class_description", params: { classId: "maize__healthy" } },
      "en",
      "standard",
    );
    expect(own).toMatch(/maize/i);
    expect(result.additional_notes).toBe(`${own} ${kb.note({ key: "healthy" }, "en", "standard")}`);
  });

  it("answers a plant of a crop we do not cover as not supported, naming the crops we cover in the reader's language", () => {
    const model = verdict({ tomato__late_blight: 0.9, bean__rust: 0.1 }, true);
    const result = assess(model, {}, true);
    expect(result.outcome).toBe("crop_not_supported");
    expect([result.is_plant, result.crop_health, result.diagnoses, result.candidates]).toEqual([
      true,
      "unknown",
      [],
      [],
    ]);
    expect(result.image_analysis.detected_crop).toBeNull();
    expect(result.treatment.urgency).toBeNull();
    expect(result.additional_notes).toBe(
      kb.note(
        { key: "crop_not_supported", params: { crops: "bean, maize, pepper, potato, rice, and tomato" } },
        "en",
        "standard",
      ),
    );
    const sw = assembleResult(
      { requestId: "r", context: context({ language: "sw" }), isPlant: true, qualityIssue: null, model },
      kb,
    );
    expect(sw.additional_notes).toContain("maharagwe, mahindi, pilipili hoho, viazi, mpunga na nyanya");
    // Not a plant comes first: an animal is not an unsupported crop.
    expect(assess(model, {}, false).outcome).toBe("not_plant");
  });

  it("answers a stated crop we do not know as not supported, naming it and the crops we cover", () => {
    const result = assess(verdict({ tomato__late_blight: 0.9, bean__rust: 0.1 }), { cropType: " grape " });
    expect(result.outcome).toBe("crop_not_supported");
    expect([result.is_plant, result.crop_health, result.diagnoses, result.candidates]).toEqual([
      true,
      "unknown",
      [],
      [],
    ]);
    expect(result.additional_notes).toBe(
      kb.note(
        {
          key: "crop_unsupported",
          params: { given: "grape", crops: "bean, maize, pepper, potato, rice, and tomato" },
        },
        "en",
        "standard",
      ),
    );
    expect(result.additional_notes).toMatch(/grape.*tomato/);
    // A crop we cover, in the farmer's words, still narrows: no crop_not_supported then.
    expect(
      assess(verdict({ tomato__late_blight: 0.9, bean__rust: 0.1 }), { cropType: "nyanya" }).outcome,
    ).toBe("diagnosed");
  });

  it("names nothing when unsure, but names the best guess and asks for a better photo", () => {
    const result = assess(verdict({ bean__rust: 0.45, bean__angular_leaf_spot: 0.4, bean__healthy: 0.15 }));
    expect(result.crop_health).toBe("unknown");
    expect(result.diagnoses).toEqual([]);
    expect(result.additional_notes).toBe(
      `${kb.note({ key: "unsure", params: { name: kb.name("bean__rust", "en"), confidence: "45" } }, "en", "standard")} ${kb.note({ key: "better_photo" }, "en", "standard")}`,
    );
    expect(result.additional_notes).toContain(`Possibly: ${kb.name("bean__rust", "en")}`);
    expect(result.image_analysis.detected_crop).toBe("bean");
    expect(result.outcome).toBe("unsure");
    // The best guesses stay readable, most likely first, with their names and calibrated confidences.
    expect(result.candidates).toEqual([
      { id: "bean__rust", name: kb.name("bean__rust", "en"), confidence: 0.45 },
      { id: "bean__angular_leaf_spot", name: kb.name("bean__angular_leaf_spot", "en"), confidence: 0.4 },
      { id: "bean__healthy", name: kb.name("bean__healthy", "en"), confidence: 0.15 },
    ]);
  });

  it("names the unsure answer's best guess in the farmer's language, and leaves the retake advice to a quality note", () => {
    const model = verdict({ tomato__late_blight: 0.5, tomato__early_blight: 0.3, tomato__healthy: 0.2 });
    const sw = assembleResult(
      {
        requestId: "r",
        context: context({ language: "sw", detailLevel: "simple" }),
        isPlant: true,
        qualityIssue: null,
        model,
      },
      kb,
    );
    expect(sw.additional_notes).toContain(kb.name("tomato__late_blight", "sw"));
    expect(kb.name("tomato__late_blight", "sw")).not.toBe(kb.name("tomato__late_blight", "en"));
    const blurred = assess(model, {}, true, "blurry");
    expect(blurred.additional_notes).toBe(
      `${kb.note({ key: "unsure", params: { name: kb.name("tomato__late_blight", "en"), confidence: "50" } }, "en", "standard")} ${kb.note({ key: "quality.blurry" }, "en", "standard")}`,
    );
  });

  it("keys every answer with its outcome, and lists candidates only where the model read a plant", () => {
    const diseased = assess(
      verdict({ tomato__late_blight: 0.7, tomato__early_blight: 0.2, tomato__healthy: 0.1 }),
    );
    expect(diseased.outcome).toBe("diagnosed");
    expect(diseased.candidates.map((c) => c.id)).toEqual([
      "tomato__late_blight",
      "tomato__early_blight",
      "tomato__healthy",
    ]);
    expect(assess(verdict({ maize__healthy: 0.8, maize__common_rust: 0.2 })).outcome).toBe("healthy");
    const notPlant = assess(verdict({ tomato__late_blight: 1 }), {}, false);
    expect([notPlant.outcome, notPlant.candidates]).toEqual(["not_plant", []]);
    const noModel = assess(null);
    expect([noModel.outcome, noModel.candidates]).toEqual(["no_model", []]);
  });

  it("answers a non-plant with no diagnosis", () => {
    const result = assess(verdict({ tomato__late_blight: 1 }), {}, false);
    expect(result.is_plant).toBe(false);
    expect(result.crop_health).toBe("unknown");
    expect(result.diagnoses).toEqual([]);
    expect(result.additional_notes).toBe(kb.note({ key: "not_plant" }, "en", "standard"));
  });

  it("does not call a photo too dark, too small or washed out 'not a plant': its quality note says what is wrong", () => {
    for (const issue of ["too_dark", "too_small", "overexposed"] as const) {
      const result = assess(verdict({ tomato__late_blight: 1 }), {}, false, issue);
      expect([result.is_plant, result.outcome], issue).toEqual([false, "not_plant"]);
      expect(result.additional_notes, issue).toBe(kb.note({ key: `quality.${issue}` }, "en", "standard"));
    }
    // A blurred page is still recognisably no plant: both problems are said.
    const blurred = assess(verdict({ tomato__late_blight: 1 }), {}, false, "blurry");
    expect(blurred.additional_notes).toBe(
      `${kb.note({ key: "not_plant" }, "en", "standard")} ${kb.note({ key: "quality.blurry" }, "en", "standard")}`,
    );
  });

  it("explains an answer unsure because the photo shows another crop than the stated one by the mismatch alone", () => {
    const result = assess(verdict({ tomato__late_blight: 0.9, bean__rust: 0.05, bean__healthy: 0.05 }), {
      cropType: "bean",
    });
    expect(result.outcome).toBe("unsure");
    expect(result.additional_notes).toBe(
      kb.note({ key: "crop_mismatch", params: { given: "bean", detected: "tomato" } }, "en", "standard"),
    );
  });

  it("down-weights diseases absent from the stated region and says which", () => {
    // A disease the distribution table records absent somewhere (e.g. rice bacterial leaf blight in Italy).
    const diseases = CLASS_IDS.filter((id) => !kb.isHealthy(id));
    const countries = ["KE", "UG", "TZ", "NG", "IN", "CN", "BR", "MX", "US", "FR", "ES", "IT", "PT", "AU"];
    const pair = diseases
      .flatMap((id) => countries.map((c) => [id, c] as const))
      .find(([id, c]) => kb.presence(kb.eppoCode(id)!, [c]) === "absent");
    expect(pair, "the distribution table records no absence at all").toBeDefined();
    const [absent, country] = pair!;
    const present = diseases.find(
      (id) => id !== absent && kb.presence(kb.eppoCode(id)!, [country]) !== "absent",
    )!;
    const model = verdict({ [absent]: 0.65, [present]: 0.35 });
    const without = assess(model);
    const within = assess(model, { region: country });
    expect(without.diagnoses[0]?.id).toBe(absent);
    expect(within.additional_notes).toContain(kb.describe(absent, "en", "standard").name);
    // 0.65 × 0.1 against 0.35: the present disease now leads.
    expect(within.diagnoses[0]?.id ?? null).toBe(present);
  });

  it("says when the region is unknown, and when the photo disagrees with the stated crop", () => {
    const model = verdict({ tomato__late_blight: 0.9, bean__rust: 0.1 });
    expect(assess(model, { region: "Atlantis" }).additional_notes).toContain("Atlantis");
    const mismatch = assess(model, { cropType: "bean" });
    expect(mismatch.diagnoses.every((d) => d.id.startsWith("bean__"))).toBe(true);
    expect(mismatch.additional_notes).toContain(
      kb.note({ key: "crop_mismatch", params: { given: "bean", detected: "tomato" } }, "en", "standard"),
    );
  });

  it("without a model: no diagnosis, the model_unavailable error and a note", () => {
    const result = assess(null);
    expect(result.error?.code).toBe("model_unavailable");
    expect(result.crop_health).toBe("unknown");
    expect(result.additional_notes).toBe(kb.note({ key: "no_model" }, "en", "standard"));
  });
});
