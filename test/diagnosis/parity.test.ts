import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT_DIR } from "../../src/config.js";
import { type Analyser, createAnalyser } from "../../src/diagnosis/analyse.js";
import { DATASETS_DIR, HAVE_DATASETS, MODEL_PATH } from "./helpers.js";

interface ParityItem {
  file: string;
  probs: number[];
  top: string;
}

/** Largest allowed difference per class probability between PyTorch + Pillow and the Node path. */
const TOLERANCE = 0.03;

if (!HAVE_DATASETS) console.warn(`parity test skipped: ${DATASETS_DIR} is absent`);

describe.skipIf(!HAVE_DATASETS)("parity with the PyTorch model (models/parity.json)", () => {
  const parity = JSON.parse(readFileSync(path.join(ROOT_DIR, "models", "parity.json"), "utf8")) as {
    model_version: string;
    classes: string[];
    items: ParityItem[];
  };
  let analyser: Analyser;
  beforeAll(async () => {
    analyser = await createAnalyser({ modelPath: MODEL_PATH, threads: 1 });
  });
  afterAll(() => analyser?.close());

  it("serves the model the parity file was made with", () => {
    expect(analyser.metadata, "the model failed to load").not.toBeNull();
    expect(analyser.metadata?.model_version).toBe(parity.model_version);
    expect(analyser.metadata?.classes).toEqual(parity.classes);
  });

  it("gives the same top class and probabilities within tolerance on every image", async () => {
    const deviations: number[] = [];
    for (const item of parity.items) {
      const analysis = await analyser.analyse(readFileSync(path.join(DATASETS_DIR, item.file)));
      const probabilities = [...(analysis.model?.probabilities ?? [])];
      const top = parity.classes[probabilities.indexOf(Math.max(...probabilities))];
      expect(top, item.file).toBe(item.top);
      const deviation = Math.max(...item.probs.map((p, i) => Math.abs(p - (probabilities[i] ?? Number.NaN))));
      expect(deviation, item.file).toBeLessThanOrEqual(TOLERANCE);
      deviations.push(deviation);
    }
    console.info(`parity: ${deviations.length} images, max |Δp| = ${Math.max(...deviations).toFixed(5)}`);
  });
});
