import type { Detection } from "../types.js";

/**
 * Share of a class map's peak above which a pixel counts as affected. The CAM papers box whole objects at
 * 0.2-0.5 (Zhou et al. 2016); here the object is the lesion, not the leaf: at 0.5 boxes covered whole lab
 * leaves, at 0.7 they close on the symptomatic part (checked by eye on test photos).
 */
export const CAM_THRESHOLD = 0.7;
/** Components smaller than this share of the crop (~ 40 % of one cell of the 9×9 map) are upsampling noise. */
const MIN_AREA_SHARE = 0.005;
const MAX_BOXES_PER_CLASS = 3;

export interface CamGeometry {
  /** The photo resized so its shorter side is the crop size, and where the model's square crop sits in it. */
  resized: { width: number; height: number };
  crop: { left: number; top: number; size: number };
}

/** Bilinear upsampling of a [camSize, camSize] map to [size, size], with pixel centres aligned (align_corners=false). */
function upsample(map: Float32Array, camSize: number, size: number): Float32Array {
  const out = new Float32Array(size * size);
  const scale = camSize / size;
  for (let y = 0; y < size; y++) {
    const sy = Math.min(Math.max((y + 0.5) * scale - 0.5, 0), camSize - 1);
    const y0 = Math.floor(sy);
    const y1 = Math.min(y0 + 1, camSize - 1);
    const fy = sy - y0;
    for (let x = 0; x < size; x++) {
      const sx = Math.min(Math.max((x + 0.5) * scale - 0.5, 0), camSize - 1);
      const x0 = Math.floor(sx);
      const x1 = Math.min(x0 + 1, camSize - 1);
      const fx = sx - x0;
      const top = map[y0 * camSize + x0]! * (1 - fx) + map[y0 * camSize + x1]! * fx;
      const bottom = map[y1 * camSize + x0]! * (1 - fx) + map[y1 * camSize + x1]! * fx;
      out[y * size + x] = top * (1 - fy) + bottom * fy;
    }
  }
  return out;
}

interface Component {
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
  area: number;
  peak: number;
}

/** 8-connected components of the pixels at or above `threshold`. */
function components(values: Float32Array, size: number, threshold: number): Component[] {
  const label = new Int32Array(size * size).fill(-1);
  const found: Component[] = [];
  const stack: number[] = [];
  for (let start = 0; start < values.length; start++) {
    if (label[start] !== -1 || values[start]! < threshold) continue;
    const c: Component = {
      minX: size,
      minY: size,
      maxX: -1,
      maxY: -1,
      area: 0,
      peak: Number.NEGATIVE_INFINITY,
    };
    label[start] = found.length;
    stack.push(start);
    while (stack.length > 0) {
      const i = stack.pop()!;
      const x = i % size;
      const y = (i - x) / size;
      c.minX = Math.min(c.minX, x);
      c.maxX = Math.max(c.maxX, x);
      c.minY = Math.min(c.minY, y);
      c.maxY = Math.max(c.maxY, y);
      c.area++;
      c.peak = Math.max(c.peak, values[i]!);
      for (let dy = -1; dy <= 1; dy++) {
        for (let dx = -1; dx <= 1; dx++) {
          const nx = x + dx;
          const ny = y + dy;
          if (nx < 0 || ny < 0 || nx >= size || ny >= size) continue;
          const j = ny * size + nx;
          if (label[j] === -1 && values[j]! >= threshold) {
            label[j] = found.length;
            stack.push(j);
          }
        }
      }
    }
    found.push(c);
  }
  return found;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

/**
 * Boxes around the regions that drove one class's score: its activation map upsampled to the crop, kept where
 * it reaches CAM_THRESHOLD of its peak, split into connected regions. Coordinates are mapped from the centre crop back to
 * the whole upright photo, normalized to 0..1. Each box's confidence is the class probability scaled by how
 * strongly that region fired relative to the strongest one.
 */
export function camBoxes(
  cam: Float32Array,
  camSize: number,
  classIndex: number,
  name: string,
  probability: number,
  geometry: CamGeometry,
): Detection[] {
  const plane = camSize * camSize;
  const map = cam.subarray(classIndex * plane, (classIndex + 1) * plane);
  const { crop, resized } = geometry;
  const values = upsample(map, camSize, crop.size);
  let peak = Number.NEGATIVE_INFINITY;
  for (const v of values) peak = Math.max(peak, v);
  if (!(peak > 0)) return [];
  const minArea = MIN_AREA_SHARE * crop.size * crop.size;
  return components(values, crop.size, CAM_THRESHOLD * peak)
    .filter((c) => c.area >= minArea)
    .sort((a, b) => b.peak - a.peak)
    .slice(0, MAX_BOXES_PER_CLASS)
    .map((c) => ({
      name,
      bbox: [
        round3(clamp01((crop.left + c.minX) / resized.width)),
        round3(clamp01((crop.top + c.minY) / resized.height)),
        round3(clamp01((c.maxX - c.minX + 1) / resized.width)),
        round3(clamp01((c.maxY - c.minY + 1) / resized.height)),
      ],
      confidence: round3(probability * (c.peak / peak)),
    }));
}
