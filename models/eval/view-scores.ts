/**
 * How sure a photo's answer is, read from what the service read (the centre view, the leaf crops, the closer view,
 * the distance), within the stated crop's classes: the service's score, three that weigh how far the views agree
 * and one that keeps the probability narrowing to the crop discards. For the val study models/eval/val-views.ts,
 * which asks whether any of them ranks the field photos better than the service's; the service thresholds the first.
 */
import { seededRandom } from "../../test/support/random.js";

/** One photo as the service read it, with the crop given. */
export interface PhotoReading {
  /** Each view's probabilities over the crop's classes, renormalised. */
  views: number[][];
  /** The views' mean over every class, renormalised over the crop's: what the service ranks and thresholds. */
  mean: number[];
  /** The share of the views' mean (over every class) on the crop's classes, before renormalising. */
  mass: number;
  /** The centre view's distance to the nearest trained class. */
  distance: number;
}

/** A score, and the class (index into the crop's classes) the answer it goes with would name. */
export interface Reading {
  score: number;
  top: number;
}

const argmax = (values: number[]) => values.reduce((best, v, i) => (v > values[best]! ? i : best), 0);

/** The service's answer: the top of the renormalised mean. */
export function served(photo: PhotoReading): Reading {
  const top = argmax(photo.mean);
  return { score: photo.mean[top]!, top };
}

/** Whether every view's own top class is the answer's. */
export function viewsAgree(photo: PhotoReading): boolean {
  const { top } = served(photo);
  return photo.views.every((view) => argmax(view) === top);
}

export const VIEW_SCORES: [string, (photo: PhotoReading) => Reading][] = [
  ["the views' mean, its top probability (the service's)", served],
  [
    // Below every photo whose views agree: one view reading another disease puts the photo behind them all.
    "the same, views that disagree on the top class ranked last",
    (photo) => {
      const answer = served(photo);
      return viewsAgree(photo) ? answer : { ...answer, score: answer.score - 1 };
    },
  ],
  [
    "the weakest view's probability of the mean's top class",
    (photo) => {
      const { top } = served(photo);
      return { score: Math.min(...photo.views.map((view) => view[top]!)), top };
    },
  ],
  [
    "the views' geometric mean (renormalised), its top probability",
    ({ views }) => {
      const pooled = views[0]!.map((_, k) =>
        Math.exp(views.reduce((sum, view) => sum + Math.log(Math.max(view[k]!, 1e-12)), 0) / views.length),
      );
      const total = pooled.reduce((a, b) => a + b, 0);
      const top = argmax(pooled);
      return { score: pooled[top]! / total, top };
    },
  ],
  [
    // A photo the model reads as another crop, or as no plant, keeps only a little of its mass on the stated crop.
    "the top probability before narrowing to the crop",
    (photo) => {
      const answer = served(photo);
      return { ...answer, score: answer.score * photo.mass };
    },
  ],
];

/** One photo under one score: how sure, and whether the class it names is right. */
export interface Ranked {
  score: number;
  right: boolean;
}

/** The share right among the k most sure, for k = 1..n (ties broken by list order, so a rerun reads the same). */
function cumulativeAccuracy(items: Ranked[]): number[] {
  const order = items
    .map((item, i) => ({ item, i }))
    .sort((a, b) => b.item.score - a.item.score || a.i - b.i);
  let right = 0;
  return order.map(({ item }, k) => {
    if (item.right) right++;
    return right / (k + 1);
  });
}

/** The largest share of `photos` that can be answered, most sure first, with at least `target` of them right. */
export function coverageAt(items: Ranked[], target: number, photos: number): number {
  const accuracy = cumulativeAccuracy(items);
  for (let k = accuracy.length - 1; k >= 0; k--) if (accuracy[k]! >= target) return (k + 1) / photos;
  return 0;
}

/** The mean over k of the share right among the k most sure: higher when the right answers rank first. */
export function rankedAccuracy(items: Ranked[]): number {
  const accuracy = cumulativeAccuracy(items);
  return accuracy.length === 0 ? 0 : accuracy.reduce((a, b) => a + b, 0) / accuracy.length;
}

/** The share right among the `share` most sure. */
export function rightAmongMostSure(items: Ranked[], share: number): number {
  const accuracy = cumulativeAccuracy(items);
  const taken = Math.round(share * items.length);
  return taken === 0 ? 0 : accuracy[taken - 1]!;
}

/**
 * Paired bootstrap over the photos: the share of `resamples` resamples (the same photos for both scores) in which
 * `candidate` ranks better than `baseline` by rankedAccuracy. Both lists hold the same photos in the same order.
 */
export function bootstrapWins(candidate: Ranked[], baseline: Ranked[], resamples: number, seed = 0): number {
  if (candidate.length !== baseline.length) throw new Error("both scores must read the same photos");
  // Seeded: the bootstrap must read the same on every rerun.
  const random = seededRandom(seed);
  let wins = 0;
  for (let r = 0; r < resamples; r++) {
    const pick = Array.from({ length: candidate.length }, () => Math.floor(random() * candidate.length));
    if (rankedAccuracy(pick.map((i) => candidate[i]!)) > rankedAccuracy(pick.map((i) => baseline[i]!)))
      wins++;
  }
  return wins / resamples;
}
