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

const windows = (crops: LeafView[]) => crops.map((crop) => JSON.stringify(crop.window));

describe.skipIf(!HAVE_DATASETS)("leaves read for their boxes alone (include_bbox)", () => {
  let analyser: Analyser;
  beforeAll(async () => {
    analyser = await createAnalyser({ modelPath: MODEL_PATH, threads: 1 });
  });
  afterAll(() => analyser?.close());

  it("reads every other leaf found, and the answer's views and numbers stay as they are", async () => {
    const { views } = analyser.metadata!;
    let readForBoxes = 0;
    for (const { file } of photos) {
      const bytes = readFileSync(path.join(DATASETS_DIR, file));
      const plain = (await analyser.analyse(bytes, { boxes: false })).model!;
      const boxed = (await analyser.analyse(bytes, { boxes: true })).model!;
      expect(plain.boxCrops, file).toEqual([]);
      expect(boxed.probabilities, file).toEqual(plain.probabilities);
      expect(windows(boxed.crops), file).toEqual(windows(plain.crops));
      const croppable = boxed.leaves.filter((leaf) => leaf.w * leaf.h <= views.max_area);
      expect(boxed.crops.length + boxed.boxCrops.length, file).toBe(croppable.length);
      for (const window of windows(boxed.boxCrops)) expect(windows(plain.crops), file).not.toContain(window);
      readForBoxes += boxed.boxCrops.length;
    }
    expect(readForBoxes, "no parity photo has a leaf beyond the answer's crops").toBeGreaterThan(0);
  });
});
