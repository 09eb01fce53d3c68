import { workerData } from "node:worker_threads";
import { move, transferableSymbol, valueSymbol } from "piscina";
import { ImageError, type ImageErrorCode } from "../diagnoser.js";
import { decodeHeif as decodeHeifPixels, type RgbaImage } from "../image/heif.js";
import { createSession, type ModelOutput, runModel } from "./session.js";

/** Pool worker: holds one ONNX session (loaded on first use) and does the CPU work that cannot run in sharp. */
export interface WorkerData {
  modelPath: string | null;
}

export interface InferTask {
  /** `count` images, NCHW float32. */
  batch: Float32Array;
  count: number;
  size: number;
}

const { modelPath } = workerData as WorkerData;
let session: ReturnType<typeof createSession> | null = null;

export async function infer(task: InferTask): Promise<ModelOutput> {
  if (!modelPath) throw new Error("no model is loaded");
  // A load that failed (a passing memory shortage, the file being replaced) is tried again by the next task,
  // not kept as this thread's answer to every task until a restart.
  session ??= createSession(modelPath).catch((error: unknown) => {
    session = null;
    throw error;
  });
  const output = await runModel(await session, task.batch, task.count, task.size);
  // Copy out of ONNX Runtime's buffers: they belong to the session, and the reply is cloned to the caller.
  return {
    count: output.count,
    logits: Float32Array.from(output.logits),
    leaf: Float32Array.from(output.leaf),
    grid: output.grid,
    distance: Float32Array.from(output.distance),
  };
}

/** An unusable file, as data: an Error's class and fields do not survive the trip back from a worker thread. */
export interface ImageErrorReply {
  /** `cause`: the decoder's own message, for the log. */
  imageError: { message: string; code: ImageErrorCode; cause?: string };
}

// libheif runs as WebAssembly on the calling thread: decoding a HEIC here keeps the event loop free.
export async function decodeHeif(task: { bytes: Uint8Array }): Promise<unknown> {
  try {
    const image: RgbaImage = await decodeHeifPixels(task.bytes);
    // The pixels (48 MB for a 12 MP photo decoded whole) are handed to the caller, not copied: a copy would hold
    // twice that while the reply crosses threads.
    return move({ [transferableSymbol]: [image.data.buffer], [valueSymbol]: image });
  } catch (error) {
    if (error instanceof ImageError) {
      const cause = error.cause instanceof Error ? error.cause.message : undefined;
      return { imageError: { message: error.message, code: error.code, cause } } satisfies ImageErrorReply;
    }
    throw error;
  }
}
