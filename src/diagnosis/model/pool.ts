import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Piscina } from "piscina";
import { uninitialisedBytes } from "../buffers.js";
import { BusyError, ImageError } from "../diagnoser.js";
import type { RgbaImage } from "../image/heif.js";
import type { ModelOutput } from "./session.js";
import type { ImageErrorReply, InferTask, WorkerData } from "./worker.js";

/** Inference and HEIF decoding on worker threads, so the event loop keeps serving while the CPU works. */
export interface InferencePool {
  /** `count` images of `size` × `size` in one run (NCHW `batch`). Rejects with BusyError when the queue is full. */
  infer(batch: Float32Array<ArrayBuffer>, count: number, size: number): Promise<ModelOutput>;
  /** Rejects with ImageError for an unusable file, BusyError when the queue is full. */
  decodeHeif(bytes: Uint8Array): Promise<RgbaImage>;
  close(): Promise<void>;
  /** Inference threads: runs given at once go side by side up to this many. */
  readonly threads: number;
}

export interface PoolOptions {
  modelPath: string | null;
  /** Inference threads (HEIC decoding has one more of its own). */
  threads: number;
  /** Tasks that may wait in each queue (inference, HEIC decoding); threads × 32 by default. */
  maxQueue?: number;
}

/**
 * A full queue holds about 32 tasks per thread of 50-150 ms each: it drains in a few seconds, so a client told
 * to come back after this long finds room.
 */
export const BUSY_RETRY_SECONDS = 5;

/** An idle HEIC thread ends after this long (the next HEIC starts one again, in well under a second). */
export const HEIC_THREAD_IDLE_MS = 30_000;

const workerUrl = new URL(`./worker${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url);

// Under tsx or vitest this module is TypeScript; worker threads start as plain Node and need tsx's loader
// to import worker.ts. A compiled build loads worker.js and needs nothing.
function workerExecArgv(): string[] {
  if (!workerUrl.pathname.endsWith(".ts")) return [];
  const tsx = createRequire(import.meta.url).resolve("tsx");
  return ["--import", pathToFileURL(tsx).href];
}

// piscina signals a full queue with a plain Error; its wording is matched here and nowhere else.
function isQueueFull(error: unknown): boolean {
  return error instanceof Error && error.message === "Task queue is at limit";
}

export function createPool(options: PoolOptions): InferencePool {
  const maxQueue = options.maxQueue ?? options.threads * 32;
  const start = (
    name: "infer" | "decodeHeif",
    threads: { min: number; max: number; idleMs: number },
    workerData: WorkerData,
  ) =>
    new Piscina({
      filename: workerUrl.href,
      // The worker has named exports only; piscina loads a worker's default task on start-up, so name one.
      name,
      minThreads: threads.min,
      maxThreads: threads.max,
      // A bounded queue: past it, callers are told to come back later instead of piling up memory and latency.
      maxQueue,
      idleTimeout: threads.idleMs,
      execArgv: workerExecArgv(),
      workerData,
    });
  const inference = start(
    "infer",
    { min: options.threads, max: options.threads, idleMs: Number.POSITIVE_INFINITY },
    { modelPath: options.modelPath },
  );
  // HEIC decoding has a thread of its own: a HEIC without a thumbnail takes about two seconds of WebAssembly, and
  // on the inference threads every photo queued behind it would wait as long. Its worker never loads the model.
  // It starts with the first HEIC and ends after a while without one: a thread costs ~35 MB, and WebAssembly
  // memory never shrinks (one 12 MP decode leaves ~100 MB behind), so an idle service gives it all back.
  const decoding = start("decodeHeif", { min: 0, max: 1, idleMs: HEIC_THREAD_IDLE_MS }, { modelPath: null });
  async function run(
    pool: Piscina,
    task: object,
    name: "infer" | "decodeHeif",
    transferList?: ArrayBuffer[],
  ): Promise<unknown> {
    try {
      return await pool.run(task, { name, transferList });
    } catch (error) {
      if (isQueueFull(error)) throw new BusyError(BUSY_RETRY_SECONDS);
      throw error;
    }
  }
  return {
    threads: options.threads,
    // The batch is handed over, not copied: the caller builds it for this one run.
    infer: (batch, count, size) =>
      run(inference, { batch, count, size } satisfies InferTask, "infer", [
        batch.buffer,
      ]) as Promise<ModelOutput>,
    async decodeHeif(bytes) {
      // A copy of its own is handed over: cloning the upload would grow a serialisation buffer to its size and
      // allocate it zeroed on the other side (buffers.ts: under jemalloc both fault every page in afresh).
      const own = uninitialisedBytes(bytes.length);
      own.set(bytes);
      const reply = (await run(decoding, { bytes: own }, "decodeHeif", [own.buffer])) as
        | RgbaImage
        | ImageErrorReply;
      if ("imageError" in reply) {
        const { message, code, cause } = reply.imageError;
        throw new ImageError(message, code, cause === undefined ? undefined : { cause: new Error(cause) });
      }
      return reply;
    },
    close: async () => {
      await Promise.all([inference.destroy(), decoding.destroy()]);
    },
  };
}
