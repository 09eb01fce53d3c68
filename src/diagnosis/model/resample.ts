/**
 * Pillow's antialiased bilinear resize (`Image.resize(size, BILINEAR)`, Resample.c), reproduced bit for bit:
 * the model was trained on photos resized by Pillow (models/training/common.py), and libvips' kernels differ
 * from it by a few grey levels, enough to move probabilities. Two passes (horizontal, then vertical), 22-bit fixed-point weights, uint8 between passes.
 */
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

/** Resizes packed RGB (3 bytes per pixel). */
export function resizeRgb(
  src: Uint8Array,
  width: number,
  height: number,
  outWidth: number,
  outHeight: number,
): Uint8Array {
  let pixels = src;
  let w = width;
  if (outWidth !== width) {
    pixels = resizeAxis(pixels, w, height, outWidth, true);
    w = outWidth;
  }
  if (outHeight !== height) pixels = resizeAxis(pixels, w, height, outHeight, false);
  return pixels;
}

function resizeAxis(
  src: Uint8Array,
  width: number,
  height: number,
  outSize: number,
  horizontal: boolean,
): Uint8Array {
  const { starts, counts, weights, kernelSize } = coefficients(horizontal ? width : height, outSize);
  const outWidth = horizontal ? outSize : width;
  const outHeight = horizontal ? height : outSize;
  const out = new Uint8Array(outWidth * outHeight * 3);
  // Step between successive source samples along the resized axis, in bytes.
  const step = horizontal ? 3 : width * 3;
  const half = 1 << (PRECISION_BITS - 1);
  for (let y = 0; y < outHeight; y++) {
    for (let x = 0; x < outWidth; x++) {
      const o = horizontal ? x : y;
      const base = horizontal ? (y * width + starts[o]!) * 3 : (starts[o]! * width + x) * 3;
      let r = half;
      let g = half;
      let b = half;
      const count = counts[o]!;
      const wBase = o * kernelSize;
      for (let k = 0; k < count; k++) {
        const wk = weights[wBase + k]!;
        const i = base + k * step;
        r += src[i]! * wk;
        g += src[i + 1]! * wk;
        b += src[i + 2]! * wk;
      }
      const d = (y * outWidth + x) * 3;
      out[d] = clip8(r);
      out[d + 1] = clip8(g);
      out[d + 2] = clip8(b);
    }
  }
  return out;
}
