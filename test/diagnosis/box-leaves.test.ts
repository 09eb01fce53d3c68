import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT_DIR } from "../../src/config.js";
import { type Analyser, createAnalyser, type LeafView } from "../../src/diagnosis/analyse.js";
import { DATASETS_DIR, HAVE_DATASETS, MODEL_PATH } from "./helpers.js";

/** Photos with leaves, as the PyTorch twin found them (models/parity.json): several field photos among them. */
const photos = (
  JSON.parse(readFileSync(path.join(ROOT_DIR, "models", "parity.json"), "utf8")) as {
    photos: { file: string; leaves: unknown[] }[];
  }
).photos.filter((photo) => photo.leaves.length > 1);

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
});
