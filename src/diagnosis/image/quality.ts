import type { QualityIssue } from "../types.js";
import type { ImageStats } from "./stats.js";

/**
 * Thresholds, chosen on 500 test-split photos and degraded copies of them at model scale (docs/diagnosis-core.md
 * has the distributions; `npm run eval` re-measures the detection and false-alarm rates, in-sample: the model
 * card says so). Chosen before the rule that the test split chooses nothing; the next change to them is chosen
 * on val.
 */
export const QUALITY_THRESHOLDS = {
  /** Shorter side in pixels. The dataset's smallest real photos are 51-71 px (a few maize and rice ones). */
  minSide: 64,
  /** Mean luma. Clean photos: 1st percentile 0.09, 5th 0.35; photos darkened to 25 %: 95th percentile 0.15. */
  darkMeanLuma: 0.17,
  /** Clipped-pixel share. Clean photos: 99th percentile 0.01; photos overexposed ×2.5: 5th percentile 0.18. */
  clippedFraction: 0.12,
  /** Mean luma above which a photo is washed out even without clipping (clean: max 0.75, white-background rice). */
  brightMeanLuma: 0.82,
  /**
   * A bright photo is overexposed only when its leaf is too (`plantLuma`, the leaf's bright parts): rice on a
   * white sheet clips its background, not its leaf. Clean validation photos: max 0.84; white-background rice
   * (all 119): max 0.87; their ×2.5 + 40 copies: 1st percentile 0.89. It spares 28 rice photos and 12 of 270
   * field photos the "overexposed" note, and misses 4 more of the 400 test copies overexposed ×2.5 + 40.
   */
  washedOutLeafLuma: 0.88,
  /** Laplacian variance. Clean photos: 1st percentile 63; blurred with σ = 1.5 px: 95th percentile 61. */
  laplacianVariance: 40,
  /**
   * Leaf-coloured share of judgeable pixels, under which no leaf is visible unless the model's leaf finder sees one.
   * Clean leaf photos: 1st percentile 0.16; non-plant photos: median 0.11.
   */
  plantFraction: 0.1,
} as const;

/**
 * The one issue worth telling the farmer about, most fundamental first: a photo too small, too dark or washed
 * out cannot be judged for sharpness or colour, so those checks come after. `leavesFound` is how many leaves the
 * model's leaf finder saw (0 without a model): a leaf is visible when it has a leaf's colour or a leaf's shape, so
 * a leaf of another colour (a colour negative left uninverted, a purple or reddened leaf) is not called missing.
 */
export function qualityIssue(
  stats: ImageStats,
  original: { width: number; height: number },
  leavesFound: number,
): QualityIssue | null {
  const t = QUALITY_THRESHOLDS;
  if (Math.min(original.width, original.height) < t.minSide) return "too_small";
  if (stats.meanLuma < t.darkMeanLuma) return "too_dark";
  const bright = stats.clippedFraction >= t.clippedFraction || stats.meanLuma > t.brightMeanLuma;
  // Next to no leaf colour left in a bright photo: the leaf may be what was washed out.
  if (bright && (stats.plantLuma === null || stats.plantLuma >= t.washedOutLeafLuma)) return "overexposed";
  if (stats.laplacianVariance < t.laplacianVariance) return "blurry";
  if (stats.plantFraction < t.plantFraction && leavesFound === 0) return "no_leaf_visible";
  return null;
}

/**
 * A photo too small, too dark or washed out cannot show what it is: whatever the is-plant checks say of it, the
 * farmer is told what is wrong with the photo, not that it shows no plant.
 */
export function hidesContent(issue: QualityIssue | null): boolean {
  return issue === "too_small" || issue === "too_dark" || issue === "overexposed";
}

/**
 * A dark photo's colours are gone (a leaf at 25 % brightness is no longer measurably green): the is-plant rule
 * ignores colour then. A washed-out photo keeps its hue in the unclipped pixels, which `plantFraction` counts.
 */
export function distortsColour(issue: QualityIssue | null): boolean {
  return issue === "too_dark";
}
