/**
 * Pillow's antialiased bilinear resize (`Image.resize(size, BILINEAR)`, Resample.c), reproduced bit for bit:
 * the model was trained on photos resized by Pillow (models/training/common.py), and libvips' kernels differ
 * from it by a few grey levels, enough to move probabilities. Two passes (horizontal, then vertical), 22-bit fixed-point weights, uint8 between passes.
 */
import { uninitialisedBytes } from "../buffers.js";

const PRECISION_BITS = 32 - 8 - 2;
const ONE = 1 << PRECISION_BITS;

interface Coefficients {
  /** First source index of each output sample. */
  starts: Int32Array;
  /** Number of source samples of each output sample. */
  counts: Int32Array;
  /** Fixed-point weights, `kernelSize` per output sample. */
  weights: Int32Array;
  kernelSize: number;
}

function triangle(x: number): number {
  const a = Math.abs(x);
  return a < 1 ? 1 - a : 0;
}

function coefficients(inSize: number, outSize: number): Coefficients {
  const scale = inSize / outSize;
  const filterScale = Math.max(scale, 1);
  const support = filterScale; // the triangle's support is 1, widened when shrinking (the antialiasing)
  const kernelSize = Math.ceil(support) * 2 + 1;
  const starts = new Int32Array(outSize);
  const counts = new Int32Array(outSize);
  const weights = new Int32Array(outSize * kernelSize);
  const raw = new Float64Array(kernelSize);
  for (let out = 0; out < outSize; out++) {
    const center = (out + 0.5) * scale;
    // C's (int) cast truncates toward zero; Math.trunc keeps that for the negative case.
    const min = Math.max(0, Math.trunc(center - support + 0.5));
    const max = Math.min(inSize, Math.trunc(center + support + 0.5)) - min;
    let total = 0;
    for (let k = 0; k < max; k++) {
      raw[k] = triangle((k + min - center + 0.5) / filterScale);
      total += raw[k]!;
    }
    for (let k = 0; k < max; k++) {
      const w = total !== 0 ? raw[k]! / total : raw[k]!;
      weights[out * kernelSize + k] = w < 0 ? Math.trunc(-0.5 + w * ONE) : Math.trunc(0.5 + w * ONE);
    }
    starts[out] = min;
    counts[out] = max;
  }
  return { starts, counts, weights, kernelSize };
}

function clip8(value: number): number {
  if (value >= ONE * 256) return 255;
  if (value <= 0) return 0;
  return value >> PRECISION_BITS;
}

/** A rectangle of the resized image, in its pixels. */
export interface OutputWindow {
  left: number;
  top: number;
  width: number;
  height: number;
}

/**
 * Resizes packed RGB (3 bytes per pixel). With `window`, only that part of the `outWidth` × `outHeight` result
 * is computed, byte for byte what cutting it out of the whole result would give: each output sample depends on
 * its own weights only, so the centre crop of a resize skips the columns and rows it would throw away.
 */
export function resizeRgb(
  src: Uint8Array,
  width: number,
  height: number,
  outWidth: number,
  outHeight: number,
  window: OutputWindow = { left: 0, top: 0, width: outWidth, height: outHeight },
): Uint8Array {
  const vertical = outHeight !== height ? coefficients(height, outHeight) : null;
  // The input rows the vertical pass reads for the window's rows (all of them without a vertical resize).
  const firstRow = vertical ? vertical.starts[window.top]! : window.top;
  const lastRow = vertical
    ? vertical.starts[window.top + window.height - 1]! + vertical.counts[window.top + window.height - 1]!
    : window.top + window.height;
  let pixels: Uint8Array;
  if (outWidth !== width) {
    pixels = resizeRows(
      src,
      width,
      firstRow,
      lastRow,
      coefficients(width, outWidth),
      window.left,
      window.width,
    );
  } else {
    pixels = copyRect(src, width, window.left, firstRow, window.width, lastRow - firstRow);
  }
  if (!vertical) return pixels;
  return resizeColumns(pixels, window.width, firstRow, vertical, window.top, window.height);
}

function copyRect(
  src: Uint8Array,
  width: number,
  left: number,
  top: number,
  w: number,
  h: number,
): Uint8Array {
  if (left === 0 && top === 0 && w === width && h * width * 3 === src.length) return src;
  const out = uninitialisedBytes(w * h * 3);
  for (let y = 0; y < h; y++) {
    const from = ((top + y) * width + left) * 3;
    out.set(src.subarray(from, from + w * 3), y * w * 3);
  }
  return out;
}

const HALF = 1 << (PRECISION_BITS - 1);

/**
 * One output pixel of either pass: the fixed-point weighted sum of the input pixels at `i`, `i + stride`, ...
 * (a row's neighbours for the horizontal pass, a column's for the vertical one) under weights[wFirst, wEnd).
 */
function weightedPixel(
  src: Uint8Array,
  i: number,
  stride: number,
  weights: Int32Array,
  wFirst: number,
  wEnd: number,
  out: Uint8Array,
  d: number,
): void {
  let r = HALF;
  let g = HALF;
  let b = HALF;
  for (let w = wFirst; w < wEnd; w++, i += stride) {
    const wk = weights[w]!;
    r += src[i]! * wk;
    g += src[i + 1]! * wk;
    b += src[i + 2]! * wk;
  }
  out[d] = clip8(r);
  out[d + 1] = clip8(g);
  out[d + 2] = clip8(b);
}

/** Horizontal pass: rows [firstRow, lastRow) of `src`, output columns [from, from + count). */
function resizeRows(
  src: Uint8Array,
  width: number,
  firstRow: number,
  lastRow: number,
  { starts, counts, weights, kernelSize }: Coefficients,
  from: number,
  count: number,
): Uint8Array {
  const out = uninitialisedBytes((lastRow - firstRow) * count * 3);
  let d = 0;
  for (let y = firstRow; y < lastRow; y++) {
    const row = y * width;
    for (let x = from; x < from + count; x++, d += 3) {
      const w = x * kernelSize;
      weightedPixel(src, (row + starts[x]!) * 3, 3, weights, w, w + counts[x]!, out, d);
    }
  }
  return out;
}

/** Vertical pass over `src` (its first row is input row `firstRow`): output rows [from, from + count). */
function resizeColumns(
  src: Uint8Array,
  width: number,
  firstRow: number,
  { starts, counts, weights, kernelSize }: Coefficients,
  from: number,
  count: number,
): Uint8Array {
  const out = uninitialisedBytes(count * width * 3);
  const step = width * 3;
  let d = 0;
  for (let y = from; y < from + count; y++) {
    const base = (starts[y]! - firstRow) * step;
    const wFirst = y * kernelSize;
    const wEnd = wFirst + counts[y]!;
    for (let x = 0; x < width; x++, d += 3) {
      weightedPixel(src, base + x * 3, step, weights, wFirst, wEnd, out, d);
    }
  }
  return out;
}
