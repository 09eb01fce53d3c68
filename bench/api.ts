/**
 * POST /diagnosis/ over real HTTP on loopback: p50/p95 latency and requests/s for a 12-megapixel JPEG and
 * a HEIC photo, at one client and a few, against the compiled server as `npm start` runs it (its node flags,
 * dist/src/server.js built first by scripts/build.ts) in its own process (so the load generator does not share
 * its event loop); the server's CPU per request; its memory at start, at its peak under 64 clients and after
 * idling; and, side by side, the decode floor (bench/decode-floor.ts: sharp alone on the same photo) that the
 * JPEG's throughput and latency are divided by.
 * Run alone: `npx tsx bench/api.ts [--requests 120] [--concurrency 4] [--allocator glibc | --malloc-conf CONF]`;
 * `npm run bench` runs it with the others, with the image's allocator and settings.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import { buildDist } from "../scripts/build.js";
import type { DiagnosisResult } from "../src/diagnosis/types.js";
import { keepsApiPhoto } from "../src/results/record.js";
import type { DecodeFloor } from "./decode-floor.js";
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
  /** Server CPU (all its threads) per answered request, milliseconds. */
  cpuMs: number;
}

/** What the service answered an image, and whether it kept the photo for the console doing so (keepsApiPhoto). */
export interface BenchAnswer {
  image: string;
  outcome: DiagnosisResult["outcome"];
  kept: boolean;
}

export interface MemoryPhase {
  clients: number;
  requests: number;
  /** Answered 503 (waited past the busy wait): the service telling clients to come back. */
  busy: number;
  failures: number;
  startMiB: number;
  peakMiB: number;
  idleMiB: number;
  idleSeconds: number;
}

export interface ApiBenchResult {
  rows: ApiBenchRow[];
  answers: BenchAnswer[];
  peakRssMiB: number;
  modelLoaded: boolean;
  skipped: string[];
  /** The decode floor, measured before and after the JPEG rows. */
  floors: DecodeFloor[];
  /** node's arguments, as `npm start` gives them. */
  command: string[];
  allocator: Allocator;
  /** jemalloc's MALLOC_CONF when it ran with settings other than the image's (`--malloc-conf`), else null. */
  mallocConf: string | null;
  memory: MemoryPhase;
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

/**
 * jemalloc, as deploy/Dockerfile preloads it: glibc's allocator keeps what libvips's threads freed, so a
 * server that decoded a burst of photos stays near its peak instead of returning to its start. Used when the
 * machine has it (Debian's libjemalloc2); the report says which allocator ran.
 */
export const JEMALLOC = `/usr/lib/${process.arch === "arm64" ? "aarch64" : "x86_64"}-linux-gnu/libjemalloc.so.2`;

/** jemalloc's settings, read from deploy/Dockerfile's `MALLOC_CONF`, so the bench runs what the image runs. */
async function mallocConf(): Promise<string> {
  const dockerfile = await readFile(path.join(ROOT, "deploy", "Dockerfile"), "utf8");
  const conf = /MALLOC_CONF=(\S+)/.exec(dockerfile)?.[1];
  if (!conf) throw new Error("deploy/Dockerfile sets no MALLOC_CONF");
  return conf;
}

/** node's arguments in `npm start` (package.json: `exec node <flags> dist/src/server.js`), flags included. */
async function startArguments(): Promise<string[]> {
  const { scripts } = JSON.parse(await readFile(path.join(ROOT, "package.json"), "utf8")) as {
    scripts: { start: string };
  };
  const [exec, node, ...args] = scripts.start.split(/\s+/);
  if (exec !== "exec" || node !== "node")
    throw new Error(`npm start is not "exec node ...": ${scripts.start}`);
  return args;
}

/** Which allocator the server runs with: the image's (jemalloc, when this machine has it) or glibc's, to compare. */
export type Allocator = "jemalloc" | "glibc";

/** The real server, started as npm start starts it, limits lifted: the bench measures work, not 429s. */
async function startServer(
  port: number,
  command: string[],
  allocator: Allocator,
  conf: string | null,
): Promise<ChildProcess> {
  await buildDist();
  const child = spawn(process.execPath, command, {
    cwd: ROOT,
    env: {
      ...process.env,
      ...(allocator === "jemalloc"
        ? { LD_PRELOAD: JEMALLOC, MALLOC_CONF: conf ?? (await mallocConf()) }
        : {}),
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

/** Resident memory of a process now (VmRSS) or at its peak so far (VmHWM), from Linux's /proc. */
async function rssMiB(pid: number, which: "VmRSS" | "VmHWM"): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kib = Number(new RegExp(`${which}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN);
  return kib / 1024;
}

/** CPU milliseconds a process has used, all threads (utime + stime of /proc/PID/stat, at 100 ticks/s). */
async function cpuMsOf(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The decode floor in a process of its own, so that nothing of the server or this load generator is in it. */
async function decodeFloor(): Promise<DecodeFloor> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", "bench/decode-floor.ts"],
    {
      cwd: ROOT,
    },
  );
  return JSON.parse(stdout.trim().split("\n").at(-1)!) as DecodeFloor;
}

/** A multipart request body and its Content-Type (with the boundary). */
type Form = { body: Buffer; contentType: string };

/** A multipart body built once: the load generator only sends bytes, so its own CPU stays out of the way. */
async function formBody(image: Buffer, filename: string): Promise<Form> {
  const form = new FormData();
  form.append("image", new Blob([image]), filename);
  form.append("language", "en");
  const request = new Request("http://localhost/", { method: "POST", body: form });
  return {
    body: Buffer.from(await request.arrayBuffer()),
    contentType: request.headers.get("content-type")!,
  };
}

/** One POST of the prebuilt multipart body. */
function post(url: string, form: Form): Promise<Response> {
  return fetch(url, { method: "POST", body: form.body, headers: { "content-type": form.contentType } });
}

/** The answer to one request: the rows' CPU includes keeping the photo exactly when this says it is kept. */
async function answerTo(url: string, form: Form): Promise<Omit<BenchAnswer, "image">> {
  const res = await post(url, form);
  if (!res.ok) throw new Error(`the bench photo was answered ${res.status}: ${await res.text()}`);
  const result = (await res.json()) as DiagnosisResult;
  return { outcome: result.outcome, kept: keepsApiPhoto(result, false) };
}

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

async function load(
  url: string,
  form: Form,
  requests: number,
  concurrency: number,
  maxSeconds: number,
): Promise<{ latencies: number[]; failures: number; busy: number; seconds: number }> {
  const latencies: number[] = [];
  let failures = 0;
  let busy = 0;
  let issued = 0;
  const started = performance.now();
  const deadline = started + maxSeconds * 1000;
  const one = async () => {
    const t = performance.now();
    const res = await post(url, form);
    await res.arrayBuffer();
    if (res.ok) latencies.push(performance.now() - t);
    else if (res.status === 503) busy++;
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
  return { latencies, failures, busy, seconds: (performance.now() - started) / 1000 };
}

/** Clients at once in the memory phase, and how long the server then idles before its RSS is read again. */
const MEMORY_CLIENTS = 64;
const IDLE_SECONDS = 15;

/**
 * Each image at one client (latency as a single user sees it) and at `concurrency` clients (throughput
 * on this machine), each phase bounded by `requests` and by `maxSeconds`.
 */
export async function runApiBench(
  options: {
    requests?: number;
    concurrency?: number;
    maxSeconds?: number;
    allocator?: Allocator;
    /** jemalloc's settings instead of deploy/Dockerfile's, to compare. */
    mallocConf?: string;
  } = {},
): Promise<ApiBenchResult> {
  const allocator = options.allocator ?? (existsSync(JEMALLOC) ? "jemalloc" : "glibc");
  if (allocator === "jemalloc" && !existsSync(JEMALLOC))
    throw new Error(
      `no jemalloc on this machine (${JEMALLOC}): apt-get install libjemalloc2, or --allocator glibc`,
    );
  if (options.mallocConf !== undefined && allocator !== "jemalloc")
    throw new Error("--malloc-conf sets up jemalloc: it does not go with --allocator glibc");
  const mallocConfUsed = options.mallocConf ?? null;
  const requests = options.requests ?? 120;
  const levels = [...new Set([1, options.concurrency ?? 4])];
  const maxSeconds = options.maxSeconds ?? 45;
  const { images, skipped } = await benchPhotos();
  const floors = [await decodeFloor()];

  const port = await freePort();
  const command = await startArguments();
  const server = await startServer(port, command, allocator, mallocConfUsed);
  const pid = server.pid!;
  try {
    const startMiB = await rssMiB(pid, "VmRSS");
    const health = (await (await fetch(`http://127.0.0.1:${port}/health`)).json()) as {
      checks: { model: string };
    };
    const url = `http://127.0.0.1:${port}/diagnosis/`;
    const rows: ApiBenchRow[] = [];
    const answers: BenchAnswer[] = [];
    let memory: MemoryPhase | undefined;
    for (const [index, [name, bytes, filename]] of images.entries()) {
      const form = await formBody(bytes, filename);
      answers.push({ image: name, ...(await answerTo(url, form)) });
      await load(url, form, 2, 2, maxSeconds); // warm-up: first-use costs are not per request
      for (const concurrency of levels) {
        const cpuBefore = await cpuMsOf(pid);
        const { latencies, failures, busy, seconds } = await load(
          url,
          form,
          requests,
          concurrency,
          maxSeconds,
        );
        const cpuMs = ((await cpuMsOf(pid)) - cpuBefore) / Math.max(1, latencies.length);
        const sorted = latencies.sort((x, y) => x - y);
        rows.push({
          image: name,
          bytes: bytes.length,
          concurrency,
          requests: latencies.length + failures + busy,
          failures: failures + busy,
          p50: percentile(sorted, 0.5),
          p95: percentile(sorted, 0.95),
          perSecond: latencies.length / seconds,
          cpuMs,
        });
      }
      if (index === 0) {
        // The JPEG again, with the floor measured right after its rows, then 64 clients at once (before any
        // HEIC, whose decoding thread would otherwise be in the memory figures).
        floors.push(await decodeFloor());
        const total = MEMORY_CLIENTS * 4;
        const phase = await load(url, form, total, MEMORY_CLIENTS, 180);
        const peakMiB = await rssMiB(pid, "VmHWM");
        await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
        memory = {
          clients: MEMORY_CLIENTS,
          requests: phase.latencies.length + phase.failures + phase.busy,
          busy: phase.busy,
          failures: phase.failures,
          startMiB,
          peakMiB,
          idleMiB: await rssMiB(pid, "VmRSS"),
          idleSeconds: IDLE_SECONDS,
        };
      }
    }
    return {
      rows,
      answers,
      peakRssMiB: await rssMiB(pid, "VmHWM"),
      modelLoaded: health.checks.model === "ok",
      skipped,
      floors,
      command,
      allocator,
      mallocConf: mallocConfUsed,
      memory: memory!,
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

/** Issue 14: the JPEG's throughput at 4 clients, against the decode floor's; issue 11: its p50 against the floor's. */
export const FLOOR_TARGETS = { throughputShare: 0.8, latencyRatio: 2.2, peakMiB: 400 };

function floorLines(result: ApiBenchResult): string[] {
  const jpeg = result.rows.filter((r) => r.image === result.rows[0]?.image);
  const single = jpeg.find((r) => r.concurrency === 1);
  const busiest = jpeg.reduce((a, b) => (a.concurrency >= b.concurrency ? a : b));
  const mean = (f: (d: DecodeFloor) => number) =>
    result.floors.reduce((sum, d) => sum + f(d), 0) / result.floors.length;
  const floorRate = mean((d) => d.perSecond);
  const floorP50 = mean((d) => d.p50);
  const floorCpu = mean((d) => d.cpuMs);
  const keepCpu = mean((d) => d.keepPhotoCpuMs);
  const share = busiest.perSecond / floorRate;
  const ratio = single ? single.p50 / floorP50 : Number.NaN;
  const verdict = (ok: boolean) => (ok ? "met" : "MISSED");
  const cores = os.cpus().length;
  // CPU a photo may take beyond its decode for the throughput to stay at the target share of the floor.
  const budget = floorCpu / FLOOR_TARGETS.throughputShare - floorCpu;
  const m = result.memory;
  return [
    `Decode floor, sharp alone with its defaults in a process of its own, the same JPEG shrunk to the service's working size: ` +
      `${floorRate.toFixed(1)} decodes/s at ${result.floors[0]!.concurrency} at once ` +
      `(${result.floors.map((d) => d.perSecond.toFixed(1)).join(" before, ")} after the API's JPEG rows), ` +
      `p50 ${floorP50.toFixed(0)} ms alone, ${floorCpu.toFixed(1)} ms of CPU per decode.`,
    "",
    `- 12 MP JPEG, ${busiest.concurrency} clients: ${busiest.perSecond.toFixed(1)} requests/s = **${(share * 100).toFixed(0)} % of the decode floor** ` +
      `(target ≥ ${FLOOR_TARGETS.throughputShare * 100} %: ${verdict(share >= FLOOR_TARGETS.throughputShare)}); ` +
      `the server used ${busiest.cpuMs.toFixed(0)} ms of CPU per request against ${floorCpu.toFixed(1)} ms for the decode alone.`,
    `- 12 MP JPEG, 1 client: p50 ${single?.p50.toFixed(0)} ms = **${ratio.toFixed(2)} × the floor's p50** ` +
      `(issue 11's target ≤ ${FLOOR_TARGETS.latencyRatio}: ${verdict(ratio <= FLOOR_TARGETS.latencyRatio)}).`,
    `- Budget: at ${FLOOR_TARGETS.throughputShare * 100} % of the floor a photo may take ${budget.toFixed(1)} ms of CPU beyond its decode ` +
      `(on ${cores} cores); keeping a photo for the console (decode, 1000 px, JPEG), done only for an upload whose result goes to ` +
      `review or to a farmer, takes ${keepCpu.toFixed(1)} ms of CPU by itself.`,
    `- Memory, ${m.clients} clients at once (12 MP JPEG, ${m.requests} requests, ${m.busy} told 503 to come back, ${m.failures} failed): ` +
      `RSS ${m.startMiB.toFixed(0)} MiB at start, **peak ${m.peakMiB.toFixed(0)} MiB** (target ≤ ${FLOOR_TARGETS.peakMiB}: ` +
      `${verdict(m.peakMiB <= FLOOR_TARGETS.peakMiB)}), ${m.idleMiB.toFixed(0)} MiB after ${m.idleSeconds} s idle.`,
  ];
}

/** How the server's allocator was set up, in the report's words. */
function allocatorSetup({ allocator, mallocConf }: ApiBenchResult): string {
  if (allocator === "jemalloc")
    return mallocConf === null
      ? "jemalloc preloaded and set up as in deploy/Dockerfile"
      : `jemalloc preloaded with MALLOC_CONF=${mallocConf} (--malloc-conf), not the image's settings`;
  return existsSync(JEMALLOC)
    ? "glibc's allocator, not the image's jemalloc (--allocator glibc)"
    : "glibc's allocator: this machine has no jemalloc";
}

export function formatApiBench(result: ApiBenchResult): string {
  return [
    "| image | size | clients | requests | failed | p50 ms | p95 ms | requests/s | server CPU ms/request |",
    "|---|---|---|---|---|---|---|---|---|",
    ...result.rows.map(
      (r) =>
        `| ${r.image} | ${(r.bytes / 1e6).toFixed(1)} MB | ${r.concurrency} | ${r.requests} | ${r.failures} | ` +
        `${r.p50.toFixed(0)} | ${r.p95.toFixed(0)} | ${r.perSecond.toFixed(1)} | ${r.cpuMs.toFixed(0)} |`,
    ),
    "",
    "POST /diagnosis/ with `language=en` over loopback HTTP against the compiled server in its own process, " +
      `started as \`npm start\` starts it (\`node ${result.command.join(" ")}\`) ` +
      `(defaults, ${allocatorSetup(result)}; ` +
      `bodies built once, so the load generator costs little). Server peak RSS over the whole run ` +
      `${result.peakRssMiB.toFixed(0)} MiB.` +
      (result.modelLoaded ? "" : " NO MODEL LOADED: image checks only."),
    "",
    `Answers: ${result.answers
      .map(
        (a) =>
          `${a.image} \`${a.outcome}\` (${a.kept ? "photo kept for the console: its rows include keeping it" : "no photo kept"})`,
      )
      .join("; ")}.`,
    "",
    ...floorLines(result),
    ...targetLines(result.rows),
    ...result.skipped.map((s) => `Skipped: ${s}`),
  ].join("\n");
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      requests: { type: "string" },
      concurrency: { type: "string" },
      allocator: { type: "string" },
      "malloc-conf": { type: "string" },
    },
  });
  if (values.allocator !== undefined && values.allocator !== "glibc" && values.allocator !== "jemalloc")
    throw new Error(`--allocator is glibc or jemalloc, not ${values.allocator}`);
  const result = await runApiBench({
    requests: values.requests ? Number(values.requests) : undefined,
    concurrency: values.concurrency ? Number(values.concurrency) : undefined,
    allocator: values.allocator,
    mallocConf: values["malloc-conf"],
  });
  console.log(formatApiBench(result));
}
