import { uninitialisedFloats } from "../buffers.js";
import type { RgbImage } from "../model/preprocess.js";

/** Measurements of a photo shrunk to 128 px on its shorter side, from which quality and is-plant are judged. */
export interface ImageStats {
  /** Variance of the 4-neighbour Laplacian of luma (0..255 scale): low when the photo is blurred. */
  laplacianVariance: number;
  /** Mean luma, 0..1 (Rec. 601 weights on sRGB values). */
  meanLuma: number;
  /** Share of pixels with luma below 0.12 (crushed shadows). */
  darkFraction: number;
  /** Share of pixels with every channel at 250 or more (clipped highlights). */
  clippedFraction: number;
  /**
   * Share of leaf-coloured pixels (`isPlantColour`) among those whose colour can be judged at all: near-black and
   * clipped-white pixels are left out, so a washed-out leaf keeps its green while a white page stays at zero.
   */
  plantFraction: number;
  /**
   * Luma, 0..1, of the leaf's bright parts: the 90th percentile over the leaf-coloured pixels. It tells how the
   * leaf itself is exposed, whatever the background (rice on a white sheet is bright overall, its leaf is not).
   * Null when under 2 % of the pixels have a leaf colour: too few to tell (a few stray pixels of a white page).
   */
  plantLuma: number | null;
}

/**
 * Leaf colours: hue from yellow-orange through green to teal (35°-170°), visibly saturated, neither black nor
 * blown out. Brown lesions are left out on purpose: wood, soil, skin and fur are brown too, and a diseased leaf
 * still shows some green or yellow around its lesions.
 */
export function isPlantColour(r: number, g: number, b: number): boolean {
  if (!hasJudgeableColour(r, g, b)) return false;
  const max = Math.max(r, g, b);
  const chroma = max - Math.min(r, g, b);
  if (chroma < 0.15 * max || chroma < 12) return false;
  let hue: number;
  if (max === r) hue = (60 * ((g - b) / chroma) + 360) % 360;
  else if (max === g) hue = 60 * ((b - r) / chroma) + 120;
  else hue = 60 * ((r - g) / chroma) + 240;
  return hue >= 35 && hue <= 170;
}

/** Neither near-black nor clipped white: a pixel whose hue means something. */
function hasJudgeableColour(r: number, g: number, b: number): boolean {
  return Math.max(r, g, b) >= 30 && Math.min(r, g, b) <= 245;
}

export function measure(image: RgbImage): ImageStats {
  const { data, width, height } = image;
  const pixels = width * height;
  const luma = uninitialisedFloats(pixels);
  let lumaSum = 0;
  let dark = 0;
  let clipped = 0;
  let plant = 0;
  const plantLumas = new Uint32Array(256);
  let measurable = 0;
  for (let i = 0; i < pixels; i++) {
    const r = data[i * 3]!;
    const g = data[i * 3 + 1]!;
    const b = data[i * 3 + 2]!;
    const y = 0.299 * r + 0.587 * g + 0.114 * b;
    luma[i] = y;
    lumaSum += y;
    if (y < 0.12 * 255) dark++;
    if (r >= 250 && g >= 250 && b >= 250) clipped++;
    if (hasJudgeableColour(r, g, b)) {
      measurable++;
      if (isPlantColour(r, g, b)) {
        plant++;
        plantLumas[Math.round(y)]!++;
      }
    }
  }
  return {
    laplacianVariance: laplacianVariance(luma, width, height),
    meanLuma: lumaSum / pixels / 255,
    darkFraction: dark / pixels,
    clippedFraction: clipped / pixels,
    plantFraction: measurable > 0 ? plant / measurable : 0,
    plantLuma:
      plant >= MIN_PLANT_SHARE_FOR_LUMA * pixels
        ? percentile(plantLumas, plant, PLANT_LUMA_PERCENTILE) / 255
        : null,
  };
}

/** The leaf's bright parts, not its mean: a dark-veined leaf washed out by sun still has dark pixels. */
const PLANT_LUMA_PERCENTILE = 0.9;
const MIN_PLANT_SHARE_FOR_LUMA = 0.02;

/** The value below which `share` of the `count` values counted in `histogram` lie. */
function percentile(histogram: Uint32Array, count: number, share: number): number {
  const rank = Math.ceil(share * count);
  let seen = 0;
  for (let value = 0; value < histogram.length; value++) {
    seen += histogram[value]!;
    if (seen >= rank) return value;
  }
  return histogram.length - 1;
}

function laplacianVariance(luma: Float32Array, width: number, height: number): number {
  if (width < 3 || height < 3) return 0;
  let sum = 0;
  let sumSq = 0;
  let n = 0;
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const i = y * width + x;
      const lap = luma[i - 1]! + luma[i + 1]! + luma[i - width]! + luma[i + width]! - 4 * luma[i]!;
      sum += lap;
      sumSq += lap * lap;
      n++;
    }
  }
  const mean = sum / n;
  return sumSq / n - mean * mean;
}
