import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Piscina } from "piscina";
import type { RgbaImage } from "../image/heif.js";
import type { ModelOutput } from "./session.js";
import type { WorkerData } from "./worker.js";

/** Inference and HEIF decoding on worker threads, so the event loop keeps serving while the CPU works. */
export interface InferencePool {
  infer(tensor: Float32Array, size: number): Promise<ModelOutput>;
  decodeHeif(bytes: Uint8Array): Promise<RgbaImage>;
  close(): Promise<void>;
}

const workerUrl = new URL(`./worker${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url);

// Under tsx or vitest this module is TypeScript; worker threads start as plain Node and need tsx's loader
// to import worker.ts. A compiled build loads worker.js and needs nothing.
function workerExecArgv(): string[] {
  if (!workerUrl.pathname.endsWith(".ts")) return [];
  const tsx = createRequire(import.meta.url).resolve("tsx");
  return ["--import", pathToFileURL(tsx).href];
}

export function createPool(options: { modelPath: string | null; threads: number }): InferencePool {
  const workerData: WorkerData = { modelPath: options.modelPath };
  const piscina = new Piscina({
    filename: workerUrl.href,
    // The worker has named exports only; piscina loads a worker's default task on start-up, so name one.
    name: "infer",
    minThreads: options.threads,
    maxThreads: options.threads,
    // A bounded queue: past it, requests wait in the HTTP layer's own limits rather than piling up here.
    maxQueue: options.threads * 32,
    idleTimeout: Number.POSITIVE_INFINITY,
    execArgv: workerExecArgv(),
    workerData,
  });
  return {
    infer: (tensor, size) => piscina.run({ tensor, size }, { name: "infer" }) as Promise<ModelOutput>,
    decodeHeif: (bytes) => piscina.run({ bytes }, { name: "decodeHeif" }) as Promise<RgbaImage>,
    close: () => piscina.destroy(),
  };
}
