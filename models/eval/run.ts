/**
 * Sends every photo through the core's public entry point, as the API does, once with the crop a farmer would
 * state and once without it.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { performance } from "node:perf_hooks";
import type { Diagnoser } from "../../src/diagnosis/diagnoser.js";
import type { DiagnosisContext, DiagnosisResult } from "../../src/diagnosis/types.js";
import { DATASETS_DIR } from "../../test/diagnosis/helpers.js";
import { type Sample, statedCrop } from "./split.js";

const PROGRESS_EVERY = 200;

/** A val study's `--threads`, and the datasets it reads: it stops with the reason when either is missing. */
export function studyThreads(text: string): number {
  const threads = Number(text);
  if (!Number.isInteger(threads) || threads < 1)
    throw new Error(`--threads is a whole number ≥ 1, not ${text}`);
  if (!existsSync(DATASETS_DIR)) throw new Error(`this study needs the datasets: nothing at ${DATASETS_DIR}`);
  return threads;
}

export interface Observation {
  sample: Sample;
  /** With `crop_type` = statedCrop(sample) (and include_bbox where asked). */
  withCrop: DiagnosisResult;
  /** Without `crop_type`; the same result as withCrop for a photo with no crop to state. */
  withoutCrop: DiagnosisResult;
}

export function context(cropType: string | undefined, includeBbox: boolean): DiagnosisContext {
  return { cropType, language: "en", detailLevel: "standard", includeBbox };
}

/** Runs `work` over the items, `concurrency` at a time, keeping their order. */
export async function mapConcurrent<T, R>(
  items: T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

export async function observe(
  diagnoser: Diagnoser,
  samples: Sample[],
  options: { datasets: string; concurrency: number; wantsBoxes: (s: Sample) => boolean },
): Promise<Observation[]> {
  const started = performance.now();
  let done = 0;
  return mapConcurrent(samples, options.concurrency, async (sample, i) => {
    const bytes = await readFile(path.join(options.datasets, sample.file));
    const crop = statedCrop(sample);
    const withCrop = await diagnoser.diagnose(
      bytes,
      context(crop, options.wantsBoxes(sample)),
      `eval-${i}-c`,
    );
    const withoutCrop = crop
      ? await diagnoser.diagnose(bytes, context(undefined, false), `eval-${i}`)
      : withCrop;
    if (++done % PROGRESS_EVERY === 0 || done === samples.length) {
      const seconds = (performance.now() - started) / 1000;
      const left = (seconds / done) * (samples.length - done);
      console.error(
        `  ${done}/${samples.length} photos, ${seconds.toFixed(0)} s, about ${left.toFixed(0)} s left`,
      );
    }
    return { sample, withCrop, withoutCrop };
  });
}
