import * as ort from "onnxruntime-node";

/** What one forward pass returns for a batch of `count` images. */
export interface ModelOutput {
  count: number;
  /** Raw logits, [count, classes] row-major. */
  logits: Float32Array;
  /** The leaf finder's maps, [count, 5, grid, grid] row-major (leaves.ts reads them). */
  leaf: Float32Array;
  grid: number;
  /** Squared Mahalanobis distance of each image's features to the nearest training class, [count]. */
  distance: Float32Array;
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
    // ONNX Runtime's arena keeps the largest batch's buffers between runs. Without it every run asks the allocator
    // afresh, and under the image's jemalloc that made inference 37-62 ms instead of 25 and the API's p50 123 ms
    // instead of 109, for no lower memory peak (README, Performance: the allocator).
    enableCpuMemArena: true,
  });
}

/** Runs `count` images of `size` × `size`, packed NCHW in `batch`. */
export async function runModel(
  session: ort.InferenceSession,
  batch: Float32Array,
  count: number,
  size: number,
): Promise<ModelOutput> {
  const input = new ort.Tensor("float32", batch, [count, 3, size, size]);
  const { logits, leaf, distance } = await session.run({ input });
  if (!logits || !leaf || !distance)
    throw new Error("the model must have the outputs `logits`, `leaf` and `distance`");
  return {
    count,
    logits: logits.data as Float32Array,
    leaf: leaf.data as Float32Array,
    grid: leaf.dims[leaf.dims.length - 1] ?? 0,
    distance: distance.data as Float32Array,
  };
}
