/**
 * Per-image latency of the diagnosis core (decode, preprocess + quality checks, inference, total) on a
 * 12-megapixel JPEG and a HEIC phone photo generated here, and the process's peak RSS.
 * Run alone: `npx tsx bench/core.ts [--runs 20] [--model path.onnx]` (another model beside its classes.json, to
 * compare); the API bench imports `runCoreBench`.
 */
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config.js";
import { type Analyser, createAnalyser } from "../src/diagnosis/analyse.js";
import { benchPhotos } from "./photos.js";

export interface StageTimes {
  p50: number;
  p95: number;
}

export interface CoreBenchRow {
  image: string;
  bytes: number;
  /** Views the model read: the centre view and the leaf crops, the answer's and any read for boxes alone (the same
   * each run: the photo does not change). */
  views: number;
  decode: StageTimes;
  preprocess: StageTimes;
  inference: StageTimes;
  total: StageTimes;
}

export interface CoreBenchResult {
  rows: CoreBenchRow[];
  /** Rows that could not run, with the reason (e.g. no heif-enc to make the HEIC photo). */
  skipped: string[];
  peakRssMiB: number;
  modelLoaded: boolean;
}

/** One photo's analysis as a request reads it, the other leaves included when it asks for boxes. */
async function analyseFor(analyser: Analyser, bytes: Buffer, boxes: boolean) {
  const analysis = await analyser.analyse(bytes);
  const others = boxes && analysis.model ? (await analysis.model.readOtherLeaves()).length : 0;
  return { ...analysis, others };
}

function percentiles(values: number[]): StageTimes {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return { p50: at(0.5), p95: at(0.95) };
}

export async function runCoreBench(
  options: { runs?: number; modelPath?: string } = {},
): Promise<CoreBenchResult> {
  const runs = options.runs ?? 20;
  const analyser = await createAnalyser({
    modelPath: options.modelPath ?? loadConfig().modelPath,
    threads: 1,
  });
  const { images, skipped } = await benchPhotos();
  const [jpegName, jpeg] = images[0]!;
  const cases: [string, Buffer, boolean][] = [
    // The API's default: no `include_bbox`, so only the answer's leaves are read.
    ...images.map(([name, bytes]): [string, Buffer, boolean] => [name, bytes, false]),
    // A diagnosis asked for boxes reads every other leaf found too, each for its own box.
    [`${jpegName}, \`include_bbox\``, jpeg, true],
  ];
  const rows: CoreBenchRow[] = [];
  try {
    for (const [name, bytes, boxes] of cases) {
      // Warm-up: first-use costs (worker start, session, wasm) are not per-image.
      const { model, others } = await analyseFor(analyser, bytes, boxes);
      const times = {
        decode: [] as number[],
        preprocess: [] as number[],
        inference: [] as number[],
        total: [] as number[],
      };
      for (let i = 0; i < runs; i++) {
        const start = performance.now();
        const { timings } = await analyseFor(analyser, bytes, boxes);
        times.total.push(performance.now() - start);
        times.decode.push(timings.decode);
        times.preprocess.push(timings.preprocess);
        times.inference.push(timings.inference);
      }
      rows.push({
        image: name,
        bytes: bytes.length,
        views: model ? 1 + model.crops.length + (model.zoom ? 1 : 0) + others : 0,
        decode: percentiles(times.decode),
        preprocess: percentiles(times.preprocess),
        inference: percentiles(times.inference),
        total: percentiles(times.total),
      });
    }
  } finally {
    await analyser.close();
  }
  return {
    rows,
    skipped,
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
    modelLoaded: analyser.metadata !== null,
  };
}

export function formatCoreBench(result: CoreBenchResult): string {
  const ms = (t: StageTimes) => `${t.p50.toFixed(1)} / ${t.p95.toFixed(1)}`;
  const lines = [
    "| image | size | views read | decode | preprocess + checks | inference | total |",
    "|---|---|---|---|---|---|---|",
    ...result.rows.map(
      (r) =>
        `| ${r.image} | ${(r.bytes / 1e6).toFixed(1)} MB | ${r.views} | ${ms(r.decode)} | ${ms(r.preprocess)} | ${ms(r.inference)} | ${ms(r.total)} |`,
    ),
    "",
    `Views read: the centre view, the leaf crops the model chose to look at and any closer view of the middle (with \`include_bbox\`, every leaf found). Milliseconds, p50 / p95, one inference thread (HEIC decoding on a thread of its own). Peak RSS ${result.peakRssMiB.toFixed(0)} MiB.` +
      (result.modelLoaded ? "" : " NO MODEL LOADED: inference not measured."),
    ...result.skipped.map((s) => `Skipped: ${s}`),
  ];
  return lines.join("\n");
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { runs: { type: "string" }, model: { type: "string" } } });
  const runs = values.runs ? Number(values.runs) : undefined;
  console.log(formatCoreBench(await runCoreBench({ runs, modelPath: values.model })));
}
