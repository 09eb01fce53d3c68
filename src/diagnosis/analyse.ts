import { existsSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { type DecodedImage, decodeImage } from "./image/decode.js";
import { isPlant } from "./image/is-plant.js";
import { qualityIssue } from "./image/quality.js";
import { type ImageStats, measure } from "./image/stats.js";
import { calibratedProbabilities } from "./model/calibrate.js";
import { decodeLeaves, type Leaf } from "./model/leaves.js";
import {
  leafProbabilities,
  loadMetadata,
  type ModelMetadata,
  NON_PLANT_CLASS,
  OTHER_PLANT_CLASS,
} from "./model/metadata.js";
import { createPool, type InferencePool } from "./model/pool.js";
import { type CentreView, centreView, type RgbImage, resizeTo, toBatch } from "./model/preprocess.js";
import { cropWindow, leafCrop, splitLeaves, type Window, workingImage, zoomWindow } from "./model/views.js";
import type { QualityIssue } from "./types.js";

/** The quality thresholds were measured on photos shrunk to 128 px on their shorter side, whatever the model's input. */
const QUALITY_SIZE = 128;

/** What the model read in one view of the photo. */
export interface ViewReading {
  logits: Float32Array;
  /** Calibrated, over all classes in classes.json order. */
  probabilities: Float64Array;
}

/** A leaf the centre view found and the model looked at closer (CONTRACT step 4). */
export interface LeafView extends ViewReading {
  leaf: Leaf;
  /** The crop's window, in fractions of the centre view. */
  window: Window;
}

/** Everything the core measures about one photo, before any text is written. */
export interface Analysis {
  width: number;
  height: number;
  stats: ImageStats;
  qualityIssue: QualityIssue | null;
  isPlant: boolean;
  /** Null without a model. */
  model: {
    /** Calibrated probabilities over all classes, the mean of the views' (centre, leaf crops, zoom: equal weights). */
    probabilities: Float64Array;
    /** `non_plant` and `other_plant` over the centre view and leaf crops: whether the photo shows a plant, and one we cover. */
    nonPlantProbability: number;
    otherPlantProbability: number;
    /** The centre view's distance to the nearest trained class (large: unlike anything trained on). */
    distance: number;
    centre: ViewReading & { view: CentreView };
    /** Every leaf found in the centre view, strongest first (fractions of the centre view). */
    leaves: Leaf[];
    /** The leaves looked at closer for the answer, strongest first. */
    crops: LeafView[];
    /**
     * The leaves filling the centre view (over `views.max_area`), strongest first: too large to crop, they are read
     * by the centre view itself (its reading, the whole view as window), for their boxes.
     */
    wholeLeaves: LeafView[];
    /**
     * The closer view of the middle, read for the answer when a leaf was found, fewer than `views.leaf_crops` were
     * cropped and the centre view was unsure (`zoomWindow`).
     */
    zoom: (ViewReading & { window: Window }) | null;
    /**
     * Reads the other leaves found (none over `views.max_area`), each for its own box and never for the answer,
     * strongest first: only a result that draws boxes needs them, so they are read on demand, after the answer.
     */
    readOtherLeaves(): Promise<LeafView[]>;
  } | null;
  /** Milliseconds per stage (the bench reports them), summed over the model runs (other leaves' included). */
  timings: { decode: number; preprocess: number; inference: number };
}

export interface Analyser {
  analyse(bytes: Buffer): Promise<Analysis>;
  /** Null when no model is loaded. */
  readonly metadata: ModelMetadata | null;
  close(): Promise<void>;
}

export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/**
 * Loads the model (when its file exists) into a worker pool and checks it answers before declaring it ready:
 * a model that fails to load is logged and treated as absent, so the service still checks images.
 */
export async function createAnalyser(options: {
  modelPath: string;
  threads: number;
  logger?: Logger;
}): Promise<Analyser> {
  const { modelPath, threads, logger } = options;
  let metadata: ModelMetadata | null = null;
  let pool: InferencePool;
  if (!existsSync(modelPath)) {
    logger?.warn({ modelPath }, "no disease model file: diagnoses are unavailable, image checks still run");
    pool = createPool({ modelPath: null, threads });
  } else {
    pool = createPool({ modelPath, threads });
    try {
      metadata = await loadMetadata(modelPath);
      await probe(pool, metadata);
      logger?.info(
        { modelPath, version: metadata.model_version, classes: metadata.classes.length },
        "disease model loaded",
      );
    } catch (error) {
      logger?.error({ err: error, modelPath }, "disease model failed to load: diagnoses are unavailable");
      metadata = null;
      await pool.close();
      pool = createPool({ modelPath: null, threads });
    }
  }
  const loaded = metadata;
  return {
    metadata,
    analyse: (bytes) => analyse(bytes, pool, loaded),
    close: () => pool.close(),
  };
}

/** A batch of two blank images: the outputs must have the shapes the contract gives, per image. */
async function probe(pool: InferencePool, metadata: ModelMetadata): Promise<void> {
  const { size } = metadata.input;
  const output = await pool.infer(new Float32Array(2 * 3 * size * size), 2, size);
  const grid = size / 16;
  const problems: string[] = [];
  if (output.logits.length !== 2 * metadata.classes.length)
    problems.push(
      `${output.logits.length / 2} logits per image but classes.json lists ${metadata.classes.length} classes`,
    );
  if (output.grid !== grid || output.leaf.length !== 2 * 5 * grid * grid)
    problems.push(`leaf maps of ${output.leaf.length / 2} values per image, not 5 × ${grid} × ${grid}`);
  if (output.distance.length !== 2) problems.push(`${output.distance.length} distances for 2 images`);
  if (problems.length > 0) throw new Error(`the model does not follow classes.json: ${problems.join("; ")}`);
}

/** Splits a batch's logits per image and calibrates each. */
function readings(logits: Float32Array, count: number, temperature: number): ViewReading[] {
  const classes = logits.length / count;
  return Array.from({ length: count }, (_, n) => {
    const own = logits.slice(n * classes, (n + 1) * classes);
    return { logits: own, probabilities: calibratedProbabilities(own, temperature) };
  });
}

/** `items` in at most `parts` runs of consecutive items, as even as they go. */
function spread<T>(items: T[], parts: number): T[][] {
  if (items.length === 0) return [];
  const size = Math.ceil(items.length / Math.max(1, parts));
  return Array.from({ length: Math.ceil(items.length / size) }, (_, n) =>
    items.slice(n * size, (n + 1) * size),
  );
}

function mean(views: ViewReading[]): Float64Array {
  const out = new Float64Array(views[0]!.probabilities.length);
  for (const view of views) for (let i = 0; i < out.length; i++) out[i]! += view.probabilities[i]!;
  for (let i = 0; i < out.length; i++) out[i]! /= views.length;
  return out;
}

/** A stopwatch summing the time spent in each stage, which may come back more than once. */
function stages() {
  const spent = { decode: 0, preprocess: 0, inference: 0 };
  return {
    spent,
    async time<T>(stage: keyof typeof spent, work: () => T | Promise<T>): Promise<T> {
      const start = performance.now();
      try {
        return await work();
      } finally {
        spent[stage] += performance.now() - start;
      }
    },
  };
}

/** The measurements the checks judge, at the scale their thresholds were chosen at. */
function measureQuality(image: DecodedImage): ImageStats {
  return measure(resizeTo(image, QUALITY_SIZE));
}

type ModelReading = NonNullable<Analysis["model"]>;

/**
 * CONTRACT steps 1-5: the centre view, its leaves, the leaves' crops from the working image, and the views' mean
 * probabilities. `meanwhile` (and the working image) run on this thread while the worker runs the centre view, so
 * they add nothing to the latency.
 */
async function runViews<T>(
  image: RgbImage,
  pool: InferencePool,
  metadata: ModelMetadata,
  clock: ReturnType<typeof stages>,
  meanwhile: () => T,
): Promise<{ model: ModelReading; meanwhile: T }> {
  const { size } = metadata.input;
  const view = await clock.time("preprocess", () => centreView(image, size));
  const centreStart = performance.now();
  const centreRun = pool.infer(toBatch([view.image], metadata.input), 1, size);
  // Its rejection is awaited below; until then it must not count as unhandled.
  centreRun.catch(() => {});
  const [working, besides] = await clock.time(
    "preprocess",
    () => [workingImage(image, metadata.views), meanwhile()] as const,
  );
  const centreOutput = await centreRun;
  clock.spent.inference += performance.now() - centreStart;

  const [centre] = readings(centreOutput.logits, 1, metadata.temperature) as [ViewReading];
  const leaves = decodeLeaves(centreOutput.leaf, centreOutput.grid, metadata.leaves);
  const { answer, others, whole } = splitLeaves(leaves, metadata.views);
  // At the model's own temperature (1), as export.py chose zoom_below: it chooses it before it fits the temperature.
  const centreTop = Math.max(
    ...leafProbabilities(calibratedProbabilities(centre.logits, 1), metadata.classes).values(),
  );
  const zoomed = zoomWindow(leaves, answer, centreTop, metadata.views);
  // The closer view goes in the leaves' batches: one more image in a run, not one more run.
  const windows = answer.map((leaf) => cropWindow(leaf, metadata.views));
  const read = await readWindows(zoomed ? [...windows, zoomed] : windows, working, pool, metadata, clock);
  const crops = answer.map((leaf, i) => ({ leaf, ...read[i]! }));
  const zoom = zoomed ? read[answer.length]! : null;
  const probabilities = mean([centre, ...crops, ...(zoom ? [zoom] : [])]);
  // Whether the photo shows a plant, and one we cover, is judged on the whole view and its leaves: the closer view
  // reads lesions, and a middle of soil or sky must not make a leaf photo look like no plant.
  const plant = zoom ? mean([centre, ...crops]) : probabilities;
  const model: ModelReading = {
    probabilities,
    nonPlantProbability: plant[metadata.classes.indexOf(NON_PLANT_CLASS)]!,
    otherPlantProbability: plant[metadata.classes.indexOf(OTHER_PLANT_CLASS)]!,
    distance: centreOutput.distance[0]!,
    centre: { ...centre, view },
    leaves,
    crops,
    wholeLeaves: whole.map((leaf) => ({ leaf, window: { x: 0, y: 0, side: 1 }, ...centre })),
    zoom,
    // In batches of their own: the answer's batches, and so its numbers, are the same whether or not they are read.
    readOtherLeaves: () => readLeaves(others, working, pool, metadata, clock),
  };
  return { model, meanwhile: besides };
}

/** Windows cut from the working image and read by the model (CONTRACT step 4), in their order. */
async function readWindows(
  windows: Window[],
  working: RgbImage,
  pool: InferencePool,
  metadata: ModelMetadata,
  clock: ReturnType<typeof stages>,
): Promise<(ViewReading & { window: Window })[]> {
  if (windows.length === 0) return [];
  const { size } = metadata.input;
  const batches = await clock.time("preprocess", () =>
    spread(
      windows.map((window) => leafCrop(working, window, size)),
      pool.threads,
    ).map((images) => ({ batch: toBatch(images, metadata.input), count: images.length })),
  );
  // The windows are spread over the inference threads: with two or more, a photo's views are read side by side.
  const outputs = await clock.time("inference", () =>
    Promise.all(batches.map(({ batch, count }) => pool.infer(batch, count, size))),
  );
  return outputs
    .flatMap((output) => readings(output.logits, output.count, metadata.temperature))
    .map((reading, i) => ({ window: windows[i]!, ...reading }));
}

/** Each leaf's crop, read by the model. */
async function readLeaves(
  leaves: Leaf[],
  working: RgbImage,
  pool: InferencePool,
  metadata: ModelMetadata,
  clock: ReturnType<typeof stages>,
): Promise<LeafView[]> {
  const windows = leaves.map((leaf) => cropWindow(leaf, metadata.views));
  const read = await readWindows(windows, working, pool, metadata, clock);
  return read.map((view, i) => ({ leaf: leaves[i]!, ...view }));
}

async function analyse(
  bytes: Buffer,
  pool: InferencePool,
  metadata: ModelMetadata | null,
): Promise<Analysis> {
  const clock = stages();
  const image = await clock.time("decode", () => decodeImage(bytes, (heif) => pool.decodeHeif(heif)));
  const measured = () => measureQuality(image);
  const { model, meanwhile: stats } = metadata
    ? await runViews(image, pool, metadata, clock, measured)
    : { model: null, meanwhile: await clock.time("preprocess", measured) };
  const leavesFound = model?.leaves.length ?? 0;
  const issue = qualityIssue(
    stats,
    { width: image.originalWidth, height: image.originalHeight },
    leavesFound,
  );
  const plant = isPlant({
    model:
      model && metadata
        ? {
            nonPlantProbability: model.nonPlantProbability,
            nonPlantThreshold: metadata.non_plant_threshold,
            distance: model.distance,
            distanceThreshold: metadata.distance_threshold,
            leavesFound,
          }
        : null,
    plantFraction: stats.plantFraction,
    qualityIssue: issue,
  });
  return {
    width: image.originalWidth,
    height: image.originalHeight,
    stats,
    qualityIssue: issue,
    isPlant: plant,
    model,
    timings: clock.spent,
  };
}
