import type { LeafView } from "./analyse.js";
import { conditionOfClass, cropOfClass } from "./crops.js";
import type { Leaf } from "./model/leaves.js";
import { leafProbabilities } from "./model/metadata.js";
import type { CentreView } from "./model/preprocess.js";
import type { Crop, Detection } from "./types.js";

const round3 = (x: number) => Math.round(x * 1000) / 1000;
const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

/**
 * A box in fractions of the centre view → fractions of the whole upright photo: the centre view is the square
 * `view.square` of the photo resized to `view.resized`, so the same mapping holds at any photo size.
 */
export function toPhoto(leaf: Leaf, view: CentreView): Detection["bbox"] {
  const { resized, square } = view;
  const x = clamp01((square.left + leaf.x * square.side) / resized.width);
  const y = clamp01((square.top + leaf.y * square.side) / resized.height);
  const w = Math.min(1 - x, (leaf.w * square.side) / resized.width);
  const h = Math.min(1 - y, (leaf.h * square.side) / resized.height);
  return [round3(x), round3(y), round3(w), round3(h)];
}

/**
 * The leaf class a crop view reads best, among the stated crop's classes when a crop the model covers is stated
 * (as the answer itself is narrowed), with its probability renormalised over the classes compared.
 */
function topLeafClass(
  crop: LeafView,
  classes: string[],
  statedCrop: Crop | null,
): { id: string; probability: number } {
  const compared = [...leafProbabilities(crop.probabilities, classes)].filter(
    ([id]) => statedCrop === null || cropOfClass(id) === statedCrop,
  );
  const total = compared.reduce((sum, [, p]) => sum + p, 0);
  let best = { id: "", p: -1 };
  for (const [id, p] of compared) if (p > best.p) best = { id, p };
  return { id: best.id, probability: total > 0 ? best.p / total : 0 };
}

/**
 * The boxes of one named disease (CONTRACT step 7): of the leaves read on their own (their crops, for the answer or
 * for their boxes alone; a leaf filling the view, by the centre view), those whose reading names that class best,
 * each with that reading's probability for it, strongest first.
 */
export function leafDetections(
  crops: LeafView[],
  view: CentreView,
  classes: string[],
  classId: string,
  statedCrop: Crop | null,
): Detection[] {
  const name = conditionOfClass(classId);
  return crops
    .map((crop) => ({ crop, top: topLeafClass(crop, classes, statedCrop) }))
    .filter(({ top }) => top.id === classId)
    .sort((a, b) => b.top.probability - a.top.probability)
    .map(({ crop, top }) => ({
      name,
      bbox: toPhoto(crop.leaf, view),
      confidence: round3(top.probability),
    }));
}
