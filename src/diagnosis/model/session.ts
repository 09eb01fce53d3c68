import * as ort from "onnxruntime-node";

/** What one forward pass returns for one image. */
export interface ModelOutput {
  /** Raw logits, one per class. */
  logits: Float32Array;
  /** Class activation maps, [classes, camSize, camSize] row-major. */
  cam: Float32Array;
  camSize: number;
}

/**
 * One ONNX Runtime session per worker thread, one intra-op thread each: parallelism comes from the pool's
 * workers, and a session with its own thread pool per worker would oversubscribe the cores.
 */
export async function createSession(modelPath: string): Promise<ort.InferenceSession> {
  return ort.InferenceSession.create(modelPath, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: "all",
  });
}

export async function runModel(
  session: ort.InferenceSession,
  tensor: Float32Array,
  size: number,
): Promise<ModelOutput> {
  const input = new ort.Tensor("float32", tensor, [1, 3, size, size]);
  const outputs = await session.run({ input });
  const logits = outputs.logits;
  const cam = outputs.cam;
  if (!logits || !cam) throw new Error("the model must have the outputs `logits` and `cam`");
  const camSize = cam.dims[cam.dims.length - 1] ?? 0;
  return { logits: logits.data as Float32Array, cam: cam.data as Float32Array, camSize };
}
