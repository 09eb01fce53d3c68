import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT_DIR } from "../../src/config.js";
import { type Analyser, createAnalyser, type LeafView } from "../../src/diagnosis/analyse.js";
import { cropOfClass } from "../../src/diagnosis/crops.js";
import { leafDetections, toPhoto } from "../../src/diagnosis/detections.js";
import { diagnoserOf } from "../../src/diagnosis/diagnose.js";
import { BusyError } from "../../src/diagnosis/diagnoser.js";
import { createKnowledge } from "../../src/diagnosis/kb.js";
import type { DiagnosisResult } from "../../src/diagnosis/types.js";
import { DATASETS_DIR, HAVE_DATASETS, MODEL_PATH } from "./helpers.js";

/** The photos of models/parity.json with the leaves the PyTorch twin found ([x, y, w, h, heat]). */
const parityPhotos = (
  JSON.parse(readFileSync(path.join(ROOT_DIR, "models", "parity.json"), "utf8")) as {
    photos: { file: string; leaves: number[][] }[];
  }
).photos;
/** Photos with several leaves: several field photos among them. */
const photos = parityPhotos.filter((photo) => photo.leaves.length > 1);

const leavesOf = (crops: LeafView[]) => crops.map((crop) => crop.leaf);

describe.skipIf(!HAVE_DATASETS)("leaves read for their boxes alone (include_bbox)", () => {
  let analyser: Analyser;
  beforeAll(async () => {
    analyser = await createAnalyser({ modelPath: MODEL_PATH, threads: 1 });
  });
  afterAll(() => analyser?.close());

  it("reads, on demand, every leaf found beyond the answer's crops, strongest first", async () => {
    const { views } = analyser.metadata!;
    let others = 0;
    for (const { file } of photos) {
      const model = (await analyser.analyse(readFileSync(path.join(DATASETS_DIR, file)))).model!;
      const read = await model.readOtherLeaves();
      const croppable = model.leaves.filter((leaf) => leaf.w * leaf.h <= views.max_area);
      expect([...leavesOf(model.crops), ...leavesOf(read)], file).toEqual(croppable);
      for (const crop of read) expect(crop.probabilities.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 6);
      others += read.length;
    }
    expect(others, "no parity photo has a leaf beyond the answer's crops").toBeGreaterThan(0);
  });

  it("boxes a leaf that fills the view when the centre view, which reads it, names the disease", async () => {
    const { views, classes } = analyser.metadata!;
    const kb = await createKnowledge();
    const diagnoser = diagnoserOf({ analyser, kb });
    /** The real analyser, but the leaves filling the view read as `classId` alone. */
    const readingWholeAs = (classId: string): Analyser => ({
      ...analyser,
      analyse: async (bytes) => {
        const analysis = await analyser.analyse(bytes);
        const probabilities = Float64Array.from(classes, (c) => Number(c === classId));
        return {
          ...analysis,
          model: analysis.model && {
            ...analysis.model,
            wholeLeaves: analysis.model.wholeLeaves.map((whole) => ({ ...whole, probabilities })),
          },
        };
      },
    });
    let boxed = 0;
    for (const { file } of parityPhotos) {
      const bytes = readFileSync(path.join(DATASETS_DIR, file));
      const model = (await analyser.analyse(bytes)).model!;
      expect(leavesOf(model.wholeLeaves), file).toEqual(
        model.leaves.filter((leaf) => leaf.w * leaf.h > views.max_area),
      );
      const [whole] = model.wholeLeaves;
      if (!whole) continue;
      expect(whole.probabilities, file).toEqual(model.centre.probabilities);
      const crop = cropOfClass(path.basename(path.dirname(file)));
      const context = {
        language: "en",
        detailLevel: "standard",
        includeBbox: true,
        cropType: crop ?? undefined,
      } as const;
      const result = await diagnoser.diagnose(bytes, context, "r");
      if (result.outcome !== "diagnosed") continue;
      const box = toPhoto(whole.leaf, model.centre.view);
      const boxesWhole = (r: DiagnosisResult) =>
        r.detections!.some((d) => d.bbox.every((v, i) => v === box[i]));
      const named = result.diagnoses.some(
        (d) => leafDetections([whole], model.centre.view, classes, d.id, crop).length > 0,
      );
      expect(boxesWhole(result), file).toBe(named);
      boxed += Number(named);
      // Read as a condition the answer does not name, the same leaf gets no box, and the answer stays.
      const unnamed = classes.find(
        (c) => cropOfClass(c) === crop && !result.diagnoses.some((d) => d.id === c),
      )!;
      const other = await diagnoserOf({ analyser: readingWholeAs(unnamed), kb }).diagnose(
        bytes,
        context,
        "r",
      );
      expect({ ...other, detections: null }, file).toEqual({ ...result, detections: null });
      expect(boxesWhole(other), file).toBe(false);
    }
    expect(boxed, "no parity photo's leaf filling the view was boxed").toBeGreaterThan(0);
  });

  it("keeps the answer and its own leaves' boxes when the queue is too full for the other leaves", async () => {
    const kb = await createKnowledge();
    /** The real analyser, but the other leaves' reading ends as `readOthers` says. */
    const readingOthers = (readOthers: () => Promise<LeafView[]>): Analyser => ({
      ...analyser,
      analyse: async (bytes) => {
        const analysis = await analyser.analyse(bytes);
        return { ...analysis, model: analysis.model && { ...analysis.model, readOtherLeaves: readOthers } };
      },
    });
    const warnings: object[] = [];
    const logger = { info() {}, error() {}, warn: (obj: object) => warnings.push(obj) };
    const busy = diagnoserOf({ analyser: readingOthers(() => Promise.reject(new BusyError(5))), kb, logger });
    const none = diagnoserOf({ analyser: readingOthers(() => Promise.resolve([])), kb });
    const broken = diagnoserOf({
      analyser: readingOthers(() => Promise.reject(new Error("worker died"))),
      kb,
    });
    const context = { language: "en", detailLevel: "standard", includeBbox: true } as const;
    let diagnosed = 0;
    for (const { file } of photos) {
      const bytes = readFileSync(path.join(DATASETS_DIR, file));
      const expected = await none.diagnose(bytes, context, "r");
      if (expected.outcome !== "diagnosed") continue;
      diagnosed++;
      expect(await busy.diagnose(bytes, context, "r"), file).toEqual(expected);
      expect(warnings.at(-1), file).toEqual({ requestId: "r" });
      // Anything but a full queue is a fault, and fails the request as before.
      await expect(broken.diagnose(bytes, context, "r")).rejects.toThrow("worker died");
    }
    expect(diagnosed, "no parity photo with leaves was diagnosed").toBeGreaterThan(0);
    expect(warnings).toHaveLength(diagnosed);
  });
});
