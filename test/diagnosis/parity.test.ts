import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT_DIR } from "../../src/config.js";
import { type Analyser, createAnalyser } from "../../src/diagnosis/analyse.js";
import { DATASETS_DIR, HAVE_DATASETS, MODEL_PATH } from "./helpers.js";

/** One photo as models/training/evaluate.py served it (PyTorch + Pillow, the contract's rule). */
interface ParityPhoto {
  file: string;
  /** Mean calibrated probabilities over the views, classes.json order. */
  p: number[];
  /** The centre view's distance. */
  distance: number;
  /** Every kept leaf: [x, y, w, h, heat], fractions of the centre view, strongest first. */
  leaves: [number, number, number, number, number][];
  /** How many leaf crops were run. */
  crops: number;
  /** Whether the closer view of the middle was run. */
  zoomed: boolean;
  /** `non_plant` and `other_plant` over the views but the closer view. */
  non_plant: number;
  other_plant: number;
  /**
   * A two-expert model's router weight on the lab expert for the centre view; 0 where the graph does not read the
   * lab expert at all (models/training/lab_gate.py). Absent for a one-network model.
   */
  lab_weight?: number;
}

interface Parity {
  model_version: string;
  tolerance: { p: number; distance_rel: number; box: number };
  photos: ParityPhoto[];
}

/** The largest difference between two probability vectors, element by element. */
const largestGap = (a: ArrayLike<number>, b: ArrayLike<number>) =>
  Math.max(...Array.from(a, (v, i) => Math.abs(v - b[i]!)));

const parity = JSON.parse(readFileSync(path.join(ROOT_DIR, "models", "parity.json"), "utf8")) as Parity;

if (!HAVE_DATASETS) console.warn(`parity test skipped: ${DATASETS_DIR} is absent`);

describe.skipIf(!HAVE_DATASETS)("parity with the PyTorch twin (models/parity.json)", () => {
  const { tolerance } = parity;
  let analyser: Analyser;
  beforeAll(async () => {
    analyser = await createAnalyser({ modelPath: MODEL_PATH, threads: 1 });
  });
  afterAll(() => analyser?.close());

  it("serves the model the parity file was made with", () => {
    expect(analyser.metadata, "the model failed to load").not.toBeNull();
    expect(analyser.metadata?.model_version).toBe(parity.model_version);
    expect(parity.photos.length).toBeGreaterThan(0);
    // A model that crops leaves must be checked on photos with leaf crops.
    if (analyser.metadata!.views.leaf_crops > 0)
      expect(parity.photos.some((photo) => photo.crops > 0)).toBe(true);
    if (analyser.metadata!.views.zoom > 0) expect(parity.photos.some((photo) => photo.zoomed)).toBe(true);
    expect(parity.photos.some((photo) => photo.leaves.length > 0)).toBe(true);
    // Both paths of the graph's gate on the lab expert must be compared with the twin.
    const weights = parity.photos.flatMap((photo) => photo.lab_weight ?? []);
    if (weights.length > 0) {
      expect(
        weights.some((w) => w === 0),
        "no parity photo the lab expert is skipped for",
      ).toBe(true);
      expect(
        weights.some((w) => w > 0),
        "no parity photo the lab expert is read for",
      ).toBe(true);
    }
  });

  it("finds the same leaves, runs the same crops and gives the same probabilities and distance", async () => {
    const worst = { p: 0, distance: 0, box: 0 };
    for (const photo of parity.photos) {
      const model = (await analyser.analyse(readFileSync(path.join(DATASETS_DIR, photo.file)))).model!;
      const served = model.leaves.map((l) => [l.x, l.y, l.w, l.h, l.heat]);
      expect(served.length, `${photo.file}: leaves`).toBe(photo.leaves.length);
      photo.leaves.forEach((leaf, i) => {
        const box = Math.max(...leaf.map((v, k) => Math.abs(v - served[i]![k]!)));
        expect(box, `${photo.file}: leaf ${i}`).toBeLessThanOrEqual(tolerance.box);
        worst.box = Math.max(worst.box, box);
      });
      expect(model.crops.length, `${photo.file}: crops`).toBe(photo.crops);
      expect(model.zoom !== null, `${photo.file}: closer view`).toBe(photo.zoomed);
      const p = largestGap(
        [...photo.p, photo.non_plant, photo.other_plant],
        [...model.probabilities, model.nonPlantProbability, model.otherPlantProbability],
      );
      expect(p, `${photo.file}: probabilities`).toBeLessThanOrEqual(tolerance.p);
      const distance = Math.abs(model.distance - photo.distance) / Math.max(Math.abs(photo.distance), 1e-6);
      expect(distance, `${photo.file}: distance`).toBeLessThanOrEqual(tolerance.distance_rel);
      worst.p = Math.max(worst.p, p);
      worst.distance = Math.max(worst.distance, distance);
    }
    console.info(
      `parity: ${parity.photos.length} photos, max |Δp| ${worst.p.toFixed(5)}, ` +
        `max relative Δdistance ${worst.distance.toFixed(5)}, max box Δ ${worst.box.toFixed(5)}`,
    );
  });
});

describe.skipIf(!HAVE_DATASETS)("leaf crops read side by side", () => {
  let one: Analyser;
  let two: Analyser;
  beforeAll(async () => {
    [one, two] = await Promise.all([
      createAnalyser({ modelPath: MODEL_PATH, threads: 1 }),
      createAnalyser({ modelPath: MODEL_PATH, threads: 2 }),
    ]);
  });
  afterAll(() => Promise.all([one?.close(), two?.close()]));

  it("gives each crop, the answer's and those read for boxes, the reading it gets on one inference thread", async () => {
    const photos = parity.photos.filter((photo) => photo.crops > 1);
    expect(photos.length, "parity.json has no photo with two leaf crops").toBeGreaterThan(0);
    let others = 0;
    for (const photo of photos) {
      const bytes = readFileSync(path.join(DATASETS_DIR, photo.file));
      const [alone, spread] = await Promise.all(
        [one, two].map(async (analyser) => {
          const model = (await analyser.analyse(bytes)).model!;
          return [...model.crops, ...(await model.readOtherLeaves())];
        }),
      );
      expect(
        spread!.map((crop) => crop.window),
        photo.file,
      ).toEqual(alone!.map((crop) => crop.window));
      // A batch of one and a batch of two differ in the last float bits, not more.
      alone!.forEach((crop, i) => {
        const gap = largestGap(crop.probabilities, spread![i]!.probabilities);
        expect(gap, `${photo.file}: crop ${i}`).toBeLessThan(1e-5);
      });
      others += alone!.length - photo.crops;
    }
    expect(others, "no photo here has a leaf beyond the answer's crops").toBeGreaterThan(0);
  });
});
