/**
 * The decode floor: what sharp alone, with its defaults, needs to decode the bench's 12 MP JPEG and shrink it
 * to the size the service works at, in a process of its own (no server, no model). `npm run bench` runs it
 * beside the API bench and divides: the API's throughput by this one's at the same number of clients, and
 * the API's p50 at one client by this p50. It also times what keeping a photo costs (the console's
 * preparePhoto), which the service adds to the diagnosis of an upload an officer may look at (keepsApiPhoto).
 * Prints one JSON line: `npx tsx bench/decode-floor.ts [--runs 30] [--concurrency 4]`.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import sharp from "sharp";
import { WORKING_SHORT_SIDE } from "../src/diagnosis/image/limits.js";
import { preparePhoto } from "../src/results/photos.js";
import { phonePhoto } from "./photos.js";

export interface DecodeFloor {
  /** Milliseconds for one decode and shrink, nothing else running (p50). */
  p50: number;
  /** Decodes per second with `concurrency` of them at once. */
  perSecond: number;
  concurrency: number;
  /** CPU milliseconds per decode at that concurrency (all threads): the cost, whatever else runs on the box. */
  cpuMs: number;
  /** CPU milliseconds of one photo prepared for keeping (decode, shrink to 1000 px, JPEG), p50 of runs. */
  keepPhotoCpuMs: number;
}

async function measure(runs: number, concurrency: number): Promise<DecodeFloor> {
  const jpeg = await phonePhoto(4000, 3000);
  const { width = 0, height = 0 } = await sharp(jpeg).metadata();
  const scale = WORKING_SHORT_SIDE / Math.min(width, height);
  const target = { width: Math.round(width * scale), height: Math.round(height * scale) };
  const decode = () =>
    sharp(jpeg).rotate().resize(target.width, target.height, { fit: "fill" }).raw().toBuffer();

  for (let i = 0; i < 3; i++) await decode();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await decode();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);

  let issued = 0;
  const total = runs * concurrency;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (issued < total) {
        issued++;
        await decode();
      }
    }),
  );
  const perSecond = total / ((performance.now() - started) / 1000);
  const cpu = process.cpuUsage(cpuBefore);

  const keep: number[] = [];
  for (let i = 0; i < Math.max(5, Math.floor(runs / 3)); i++) {
    const before = process.cpuUsage();
    await preparePhoto(jpeg);
    const used = process.cpuUsage(before);
    keep.push((used.user + used.system) / 1000);
  }
  keep.sort((a, b) => a - b);
  return {
    p50: times[Math.floor(times.length / 2)]!,
    perSecond,
    concurrency,
    cpuMs: (cpu.user + cpu.system) / 1000 / total,
    keepPhotoCpuMs: keep[Math.floor(keep.length / 2)]!,
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { runs: { type: "string" }, concurrency: { type: "string" } } });
  const floor = await measure(Number(values.runs ?? 30), Number(values.concurrency ?? 4));
  console.log(JSON.stringify(floor));
}
