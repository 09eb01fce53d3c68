import type { LeafSettings } from "./metadata.js";

/** A leaf the model found in its centre view: its box clipped to the view, in fractions of the view. */
export interface Leaf {
  x: number;
  y: number;
  w: number;
  h: number;
  heat: number;
}

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));
const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

/** Intersection over union of two [x, y, w, h] boxes. */
export function iou(a: Leaf, b: Leaf): number {
  const w = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
  if (w <= 0 || h <= 0) return 0;
  const inter = w * h;
  const union = a.w * a.h + b.w * b.h - inter;
  return union > 0 ? inter / union : 0;
}

/** Is the cell (i, j) at least as strong as each of its up to 8 neighbours? (Ties keep both.) */
function isLocalMaximum(logits: ArrayLike<number>, grid: number, i: number, j: number): boolean {
  const own = logits[i * grid + j]!;
  for (let di = -1; di <= 1; di++) {
    for (let dj = -1; dj <= 1; dj++) {
      const ni = i + di;
      const nj = j + dj;
      if (ni < 0 || nj < 0 || ni >= grid || nj >= grid) continue;
      if (logits[ni * grid + nj]! > own) return false;
    }
  }
  return true;
}

/**
 * The leaves of one image from the model's `leaf` output, [5, grid, grid] row-major (CenterNet-style: centre
 * heat, x and y offsets within the cell, log width, log height): local maxima of the heat at or above the
 * threshold, strongest first, greedy non-maximum suppression, at most `max` (CONTRACT step 2). The maxima are
 * compared on the logits: sigmoid is monotonic, and the logits do not saturate to equal values.
 */
export function decodeLeaves(leaf: ArrayLike<number>, grid: number, settings: LeafSettings): Leaf[] {
  const plane = grid * grid;
  const found: Leaf[] = [];
  for (let i = 0; i < grid; i++) {
    for (let j = 0; j < grid; j++) {
      const cell = i * grid + j;
      const heat = sigmoid(leaf[cell]!);
      if (heat < settings.threshold || !isLocalMaximum(leaf, grid, i, j)) continue;
      const cx = (j + sigmoid(leaf[plane + cell]!)) / grid;
      const cy = (i + sigmoid(leaf[2 * plane + cell]!)) / grid;
      const w = Math.exp(leaf[3 * plane + cell]!);
      const h = Math.exp(leaf[4 * plane + cell]!);
      const x0 = clamp01(cx - w / 2);
      const y0 = clamp01(cy - h / 2);
      const x1 = clamp01(cx + w / 2);
      const y1 = clamp01(cy + h / 2);
      // A box wholly outside the view clips to nothing.
      if (x1 > x0 && y1 > y0) found.push({ x: x0, y: y0, w: x1 - x0, h: y1 - y0, heat });
    }
  }
  found.sort((a, b) => b.heat - a.heat);
  const kept: Leaf[] = [];
  for (const candidate of found) {
    if (kept.length >= settings.max) break;
    if (kept.every((k) => iou(k, candidate) <= settings.nms_iou)) kept.push(candidate);
  }
  return kept;
}
