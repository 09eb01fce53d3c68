import { workerData } from "node:worker_threads";
import { ImageError, type ImageErrorCode } from "../diagnoser.js";
import { decodeHeif as decodeHeifPixels, type RgbaImage } from "../image/heif.js";
import { createSession, type ModelOutput, runModel } from "./session.js";

/** Pool worker: holds one ONNX session (loaded on first use) and does the CPU work that cannot run in sharp. */
export interface WorkerData {
  modelPath: string | null;
}

const { modelPath } = workerData as WorkerData;
let session: ReturnType<typeof createSession> | null = null;

// libheif-js says why a file failed only on console.log (its exceptions are generic), and a worker's console
// reaches the server's stdout between the JSON log lines. Nothing else on this thread uses console.log: its
// words are kept for the ImageError's cause, which the API logs with the request id.
let libheifSaid: string[] = [];
console.log = (...args: unknown[]) => {
  for (const arg of args) {
    const text = typeof arg === "string" ? arg : (arg as { message?: unknown } | null)?.message;
    if (typeof text === "string" && text.trim()) libheifSaid.push(text.trim());
  }
};

export async function infer(task: { tensor: Float32Array; size: number }): Promise<ModelOutput> {
  if (!modelPath) throw new Error("no model is loaded");
  session ??= createSession(modelPath);
  const output = await runModel(await session, task.tensor, task.size);
  // Copy out of ONNX Runtime's buffers: they belong to the session, and the reply is cloned to the caller.
  return {
    logits: Float32Array.from(output.logits),
    cam: Float32Array.from(output.cam),
    camSize: output.camSize,
  };
}

/** An unusable file, as data: an Error's class and fields do not survive the trip back from a worker thread. */
export interface ImageErrorReply {
  /** `cause`: the decoder's own message, for the log. */
  imageError: { message: string; code: ImageErrorCode; cause?: string };
}

// libheif runs as WebAssembly on the calling thread: decoding a 12 MP HEIC here keeps the event loop free.
export async function decodeHeif(task: { bytes: Uint8Array }): Promise<RgbaImage | ImageErrorReply> {
  libheifSaid = [];
  try {
    return await decodeHeifPixels(task.bytes);
  } catch (error) {
    if (error instanceof ImageError) {
      const thrown = error.cause instanceof Error ? [error.cause.message] : [];
      const cause = [...thrown, ...libheifSaid].join(": ") || undefined;
      return { imageError: { message: error.message, code: error.code, cause } };
    }
    throw error;
  }
}
