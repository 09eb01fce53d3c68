import { describe, expect, it } from "vitest";
import {
  bootstrapWins,
  coverageAt,
  type PhotoReading,
  type Ranked,
  rankedAccuracy,
  rightAmongMostSure,
  VIEW_SCORES,
} from "../../models/eval/view-scores.js";

type Score = (typeof VIEW_SCORES)[0][1];
const [meanScore, agreementScore, weakestScore, geometricScore, unnarrowedScore] = VIEW_SCORES.map(
  ([, score]) => score,
) as [Score, Score, Score, Score, Score];

/** A photo whose views all keep `mass` of their probability on the crop: the service's mean is theirs. */
function reading(views: number[][], mass = 1, distance = 100): PhotoReading {
  const mean = views[0]!.map((_, k) => views.reduce((sum, view) => sum + view[k]!, 0) / views.length);
  return { views, mean, mass, distance };
}
const mean = (views: number[][]) => meanScore(reading(views));
const agreement = (views: number[][]) => agreementScore(reading(views));
const weakest = (views: number[][]) => weakestScore(reading(views));
const geometric = (views: number[][]) => geometricScore(reading(views));

// Three views of one photo over a crop's three classes: two read class 0, the leaf crop reads class 1.
const torn = [
  [0.8, 0.1, 0.1],
  [0.7, 0.2, 0.1],
  [0.3, 0.6, 0.1],
];
const agreeing = [
  [0.5, 0.3, 0.2],
  [0.6, 0.3, 0.1],
];

describe("scores read from a photo's views (models/eval/val-views.ts)", () => {
  it("takes the service's score as the top probability of the views' mean", () => {
    expect(mean(torn)).toEqual({ score: expect.closeTo(0.6, 10), top: 0 });
  });

  it("ranks a photo whose views disagree below one whose views agree, however sure its mean", () => {
    expect(mean(torn).score).toBeGreaterThan(mean(agreeing).score);
    expect(agreement(torn).score).toBeLessThan(agreement(agreeing).score);
    expect(agreement(agreeing)).toEqual(mean(agreeing));
  });

  it("reads the weakest view's support for the mean's top class", () => {
    expect(weakest(torn)).toEqual({ score: 0.3, top: 0 });
  });

  it("pools the views geometrically, which can name another class than the mean", () => {
    const split = [
      [0.8, 0.2],
      [0.8, 0.2],
      [0.01, 0.99],
    ];
    expect(mean(split).top).toBe(0);
    expect(geometric(split).top).toBe(1);
    const pooled = [0.8 * 0.8 * 0.01, 0.2 * 0.2 * 0.99].map((p) => Math.cbrt(p));
    expect(geometric(split).score).toBeCloseTo(pooled[1]! / (pooled[0]! + pooled[1]!), 10);
  });

  it("ranks by the service's mean, which weighs each view by the mass it keeps on the crop", () => {
    // The first view keeps 0.9 of its probability on the crop, the second 0.1: the service's mean follows the first.
    const photo: PhotoReading = {
      views: [
        [0.6, 0.4],
        [0.1, 0.9],
      ],
      // over every class: [0.54, 0.36] and [0.01, 0.09], averaged, then renormalised over the crop's mass 0.5
      mean: [(0.54 + 0.01) / 2 / 0.5, (0.36 + 0.09) / 2 / 0.5],
      mass: 0.5,
      distance: 100,
    };
    expect(meanScore(photo)).toEqual({ score: expect.closeTo(0.55, 10), top: 0 });
    expect(weakestScore(photo)).toEqual({ score: 0.1, top: 0 });
  });

  it("keeps the probability narrowing to the crop discards: a photo read as another crop ranks low", () => {
    const sure = reading([[0.9, 0.1]], 0.95);
    const elsewhere = reading([[0.95, 0.05]], 0.2);
    expect(meanScore(elsewhere).score).toBeGreaterThan(meanScore(sure).score);
    expect(unnarrowedScore(elsewhere)).toEqual({ score: expect.closeTo(0.19, 10), top: 0 });
    expect(unnarrowedScore(sure).score).toBeGreaterThan(unnarrowedScore(elsewhere).score);
  });
});

const photo = (score: number, right: boolean): Ranked => ({ score, right });
// Most sure first: right, wrong, right, right, wrong.
const ranked = [photo(0.6, true), photo(0.9, true), photo(0.5, false), photo(0.8, false), photo(0.7, true)];

describe("ranking photos by a score", () => {
  it("answers the largest share that stays at the target, counting the photos no score reads", () => {
    // Right among the k most sure: 1, 1/2, 2/3, 3/4, 3/5.
    expect(coverageAt(ranked, 0.75, 10)).toBe(0.4);
    expect(coverageAt(ranked, 0.6, 5)).toBe(1);
    expect(coverageAt([photo(0.9, false)], 0.5, 1)).toBe(0);
  });

  it("averages the accuracy of the k most sure over every k", () => {
    expect(rankedAccuracy(ranked)).toBeCloseTo((1 + 1 / 2 + 2 / 3 + 3 / 4 + 3 / 5) / 5, 10);
    expect(rightAmongMostSure(ranked, 0.4)).toBe(0.5);
  });

  it("bootstraps the same photos for both scores, and reads the same on a rerun", () => {
    const perfect = ranked.map((p) => photo(p.right ? 1 + p.score : p.score, p.right));
    const inverted = ranked.map((p) => photo(p.right ? p.score : 1 + p.score, p.right));
    expect(bootstrapWins(perfect, inverted, 200)).toBeGreaterThan(0.9);
    expect(bootstrapWins(inverted, perfect, 200)).toBe(0);
    expect(bootstrapWins(ranked, inverted, 200, 7)).toBe(bootstrapWins(ranked, inverted, 200, 7));
    expect(() => bootstrapWins(ranked, ranked.slice(1), 10)).toThrow(/same photos/);
  });
});
