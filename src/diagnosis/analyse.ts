import { existsSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { decodeImage } from "./image/decode.js";
import { isPlant } from "./image/is-plant.js";
import { qualityIssue } from "./image/quality.js";
import { type ImageStats, measure } from "./image/stats.js";
import { calibratedProbabilities } from "./model/calibrate.js";
import { inputSpec, loadMetadata, type ModelMetadata, NON_PLANT_CLASS } from "./model/metadata.js";
import { createPool, type InferencePool } from "./model/pool.js";
import { type InputSpec, type ModelView, preprocess, resizeTo } from "./model/preprocess.js";
import type { ModelOutput } from "./model/session.js";
import type { QualityIssue } from "./types.js";

/** The quality thresholds were measured on photos shrunk to 128 px on their shorter side, whatever the model's input. */
const QUALITY_SIZE = 128;

/** Everything the core measures about one photo, before any text is written. */
export interface Analysis {
  width: number;
  height: number;
  stats: ImageStats;
  qualityIssue: QualityIssue | null;
  isPlant: boolean;
  /** Null without a model. */
  model: {
    /** Calibrated probabilities over all classes, in classes.json order. */
    probabilities: Float64Array;
    nonPlantProbability: number;
    output: ModelOutput;
    view: ModelView;
  } | null;
  /** Milliseconds per stage (the bench reports them). */
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
      const size = metadata.input.size;
      const probe = await pool.infer(new Float32Array(3 * size * size), size);
      if (probe.logits.length !== metadata.classes.length) {
        throw new Error(
          `the model has ${probe.logits.length} outputs but classes.json lists ${metadata.classes.length} classes`,
        );
      }
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
  const model = metadata ? { metadata, spec: inputSpec(metadata) } : null;
  return {
    metadata,
    analyse: (bytes) => analyse(bytes, pool, model),
    close: () => pool.close(),
  };
}

async function analyse(
  bytes: Buffer,
  pool: InferencePool,
  loaded: { metadata: ModelMetadata; spec: InputSpec } | null,
): Promise<Analysis> {
  const t0 = performance.now();
  const image = await decodeImage(bytes, (heif) => pool.decodeHeif(heif));
  const t1 = performance.now();
  const metadata = loaded?.metadata ?? null;
  const view = loaded ? preprocess(image, loaded.spec) : null;
  const stats = measure(resizeTo(image, QUALITY_SIZE));
  const issue = qualityIssue(stats, { width: image.originalWidth, height: image.originalHeight });
  const t2 = performance.now();
  let model: Analysis["model"] = null;
  if (metadata && view) {
    const output = await pool.infer(view.tensor, metadata.input.size);
    const probabilities = calibratedProbabilities(output.logits, metadata.temperature);
    const nonPlantProbability = probabilities[metadata.classes.indexOf(NON_PLANT_CLASS)] ?? 0;
    model = { probabilities, nonPlantProbability, output, view };
  }
  const t3 = performance.now();
  const plant = isPlant({
    nonPlantProbability: model?.nonPlantProbability ?? null,
    nonPlantThreshold: metadata?.non_plant_threshold ?? 1,
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
    timings: { decode: t1 - t0, preprocess: t2 - t1, inference: t3 - t2 },
  };
}
