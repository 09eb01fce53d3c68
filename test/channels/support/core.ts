import path from "node:path";
import sharp from "sharp";
import { ROOT_DIR } from "../../../src/config.js";
import { createDiagnoser } from "../../../src/diagnosis/diagnose.js";
import type { Diagnoser } from "../../../src/diagnosis/diagnoser.js";
import { createKnowledge, type Knowledge } from "../../../src/diagnosis/kb.js";

/** The real diagnosis core and knowledge base, as the worker runs them (one inference thread: a shared CI box). */
export async function loadCore(): Promise<{ diagnoser: Diagnoser; knowledge: Knowledge }> {
  const [diagnoser, knowledge] = await Promise.all([
    createDiagnoser({ modelPath: path.join(ROOT_DIR, "models/disease-classifier.onnx"), threads: 1 }),
    createKnowledge(),
  ]);
  return { diagnoser, knowledge };
}

/** Counts calls to the real core: how a test sees that a replayed webhook was diagnosed once. */
export function counting(diagnoser: Diagnoser): Diagnoser & { calls: () => number } {
  let calls = 0;
  return {
    diagnose: (...args) => {
      calls += 1;
      return diagnoser.diagnose(...args);
    },
    modelReady: () => diagnoser.modelReady(),
    close: () => diagnoser.close(),
    calls: () => calls,
  };
}

const LESION = [92, 60, 28];
const RIB = [150, 190, 110];
const LEAF = [60, 140, 50];
const SOIL = [110, 90, 62];

/**
 * A leaf-like photo: a green leaf with a midrib and brown lesions on soil, with sensor-like grain so the
 * core's sharpness check sees a focused phone picture. Deterministic per seed.
 */
export async function leafPhoto(seed = 1): Promise<Buffer> {
  const width = 640;
  const height = 480;
  let state = seed * 2654435761;
  const random = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  const spots = Array.from({ length: 10 }, () => ({
    x: 180 + random() * 280,
    y: 150 + random() * 180,
    r: 8 + random() * 22,
  }));
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const dx = (x - width / 2) / 250;
      const dy = (y - height / 2) / 170;
      const onLeaf = dx * dx + dy * dy <= 1;
      const onRib = onLeaf && Math.abs(y - height / 2 - dx * 20) < 3;
      const onSpot = onLeaf && spots.some((s) => (x - s.x) ** 2 + (y - s.y) ** 2 <= s.r ** 2);
      const colour = onSpot ? LESION : onRib ? RIB : onLeaf ? LEAF : SOIL;
      const grain = (random() - 0.5) * 40;
      for (let c = 0; c < 3; c++)
        pixels[(y * width + x) * 3 + c] = Math.max(0, Math.min(255, colour[c]! + grain));
    }
  }
  return sharp(pixels, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 88 })
    .toBuffer();
}
