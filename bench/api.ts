/**
 * POST /diagnosis/ over real HTTP on loopback: p50/p95 latency and requests/s for a 12-megapixel JPEG and
 * a HEIC photo, at one client and a few, against `src/server.ts` in its own process (so the load generator
 * does not share its event loop), and that process's peak RSS.
 * Run alone: `npx tsx bench/api.ts [--requests 120] [--concurrency 4]`; `npm run bench` runs it with the others.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import { createServer } from "node:net";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { benchPhotos } from "./photos.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

export interface ApiBenchRow {
  image: string;
  bytes: number;
  concurrency: number;
  requests: number;
  failures: number;
  p50: number;
  p95: number;
  perSecond: number;
}

export interface ApiBenchResult {
  rows: ApiBenchRow[];
  peakRssMiB: number;
  modelLoaded: boolean;
  skipped: string[];
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

/** The real server (npm start's entry point), with limits lifted so the bench measures work, not 429s. */
async function startServer(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/server.ts"], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
      RATE_LIMIT_DIAGNOSIS: "100000",
      REDIS_URL: "",
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    const up = await fetch(`http://127.0.0.1:${port}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return child;
    await new Promise((r) => setTimeout(r, 250));
  }
  child.kill("SIGTERM");
  throw new Error("server did not become healthy within 120 s");
}

/** Peak resident memory of a process, from Linux's VmHWM. */
async function peakRssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kib = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return kib / 1024;
}

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

async function load(
  url: string,
  image: Buffer,
  filename: string,
  requests: number,
  concurrency: number,
  maxSeconds: number,
): Promise<{ latencies: number[]; failures: number; seconds: number }> {
  const latencies: number[] = [];
  let failures = 0;
  let issued = 0;
  const started = performance.now();
  const deadline = started + maxSeconds * 1000;
  const one = async () => {
    const form = new FormData();
    form.append("image", new Blob([image]), filename);
    form.append("language", "en");
    const t = performance.now();
    const res = await fetch(url, { method: "POST", body: form });
    await res.arrayBuffer();
    if (res.ok) latencies.push(performance.now() - t);
    else failures++;
  };
  const worker = async () => {
    while (issued < requests && performance.now() < deadline) {
      issued++;
      await one().catch(() => {
        failures++;
      });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { latencies, failures, seconds: (performance.now() - started) / 1000 };
}

/**
 * Each image at one client (latency as a single user sees it) and at `concurrency` clients (throughput
 * on this machine), each phase bounded by `requests` and by `maxSeconds`.
 */
export async function runApiBench(
  options: { requests?: number; concurrency?: number; maxSeconds?: number } = {},
): Promise<ApiBenchResult> {
  const requests = options.requests ?? 120;
  const levels = [...new Set([1, options.concurrency ?? 4])];
  const maxSeconds = options.maxSeconds ?? 45;
  const { images, skipped } = await benchPhotos();

  const port = await freePort();
  const server = await startServer(port);
  try {
    const health = (await (await fetch(`http://127.0.0.1:${port}/health`)).json()) as {
      checks: { model: string };
    };
    const url = `http://127.0.0.1:${port}/diagnosis/`;
    const rows: ApiBenchRow[] = [];
    for (const [name, bytes, filename] of images) {
      await load(url, bytes, filename, 2, 2, maxSeconds); // warm-up: first-use costs are not per request
      for (const concurrency of levels) {
        const { latencies, failures, seconds } = await load(
          url,
          bytes,
          filename,
          requests,
          concurrency,
          maxSeconds,
        );
        const sorted = latencies.sort((x, y) => x - y);
        rows.push({
          image: name,
          bytes: bytes.length,
          concurrency,
          requests: latencies.length + failures,
          failures,
          p50: percentile(sorted, 0.5),
          p95: percentile(sorted, 0.95),
          perSecond: latencies.length / seconds,
        });
      }
    }
    return {
      rows,
      peakRssMiB: await peakRssMiB(server.pid!),
      modelLoaded: health.checks.model === "ok",
      skipped,
    };
  } finally {
    server.kill("SIGTERM");
    await once(server, "exit");
  }
}

/** The service's latency and throughput targets on a 2-core machine (p50 and p95 at one client, requests/s at the most). */
export const API_TARGETS = { p50: 150, p95: 400, perSecond: 15 };

/** One line per image saying which targets the measurement met, so a regression reads as such. */
function targetLines(rows: ApiBenchRow[]): string[] {
  const images = [...new Set(rows.map((r) => r.image))];
  return images.map((image) => {
    const mine = rows.filter((r) => r.image === image);
    const single = mine.reduce((a, b) => (a.concurrency <= b.concurrency ? a : b));
    const busiest = mine.reduce((a, b) => (a.concurrency >= b.concurrency ? a : b));
    const verdict = (ok: boolean) => (ok ? "met" : "MISSED");
    return (
      `- targets, ${image}: p50 ≤ ${API_TARGETS.p50} ms ${verdict(single.p50 <= API_TARGETS.p50)}, ` +
      `p95 ≤ ${API_TARGETS.p95} ms ${verdict(single.p95 <= API_TARGETS.p95)}, ` +
      `≥ ${API_TARGETS.perSecond} requests/s ${verdict(busiest.perSecond >= API_TARGETS.perSecond)}.`
    );
  });
}

export function formatApiBench(result: ApiBenchResult): string {
  return [
    "| image | size | clients | requests | failed | p50 ms | p95 ms | requests/s |",
    "|---|---|---|---|---|---|---|---|",
    ...result.rows.map(
      (r) =>
        `| ${r.image} | ${(r.bytes / 1e6).toFixed(1)} MB | ${r.concurrency} | ${r.requests} | ${r.failures} | ` +
        `${r.p50.toFixed(0)} | ${r.p95.toFixed(0)} | ${r.perSecond.toFixed(1)} |`,
    ),
    "",
    "POST /diagnosis/ with `language=en` over loopback HTTP against `src/server.ts` in its own process " +
      `(defaults: one inference thread). Server peak RSS ${result.peakRssMiB.toFixed(0)} MiB.` +
      (result.modelLoaded ? "" : " NO MODEL LOADED: image checks only."),
    "",
    ...targetLines(result.rows),
    ...result.skipped.map((s) => `Skipped: ${s}`),
  ].join("\n");
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: { requests: { type: "string" }, concurrency: { type: "string" } },
  });
  const result = await runApiBench({
    requests: values.requests ? Number(values.requests) : undefined,
    concurrency: values.concurrency ? Number(values.concurrency) : undefined,
  });
  console.log(formatApiBench(result));
}
