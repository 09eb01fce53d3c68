import { describe, expect, it } from "vitest";
import { fitLogistic, learnedFeatures, outOfFold, predictLogistic } from "../../models/eval/learned-score.js";
import { seededRandom } from "../support/random.js";

/** Rows drawn from a known logistic model: p(right) = sigmoid(2 x0 - 1); x1 is noise. */
function drawn(n: number, seed: number): { X: number[][]; y: boolean[] } {
  const random = seededRandom(seed);
  const X = Array.from({ length: n }, () => [4 * random() - 2, 4 * random() - 2]);
  const y = X.map(([x0]) => random() < 1 / (1 + Math.exp(-(2 * x0! - 1))));
  return { X, y };
}

describe("the learned score's logistic regression (models/eval/learned-score.ts)", () => {
  it("recovers the slope and intercept of the model the rows were drawn from, and no weight for noise", () => {
    const { X, y } = drawn(6000, 1);
    const model = fitLogistic(X, y, 1e-6);
    const slope = model.weights[1]! / model.scale[0]!;
    const intercept = model.weights[0]! - slope * model.centre[0]!;
    expect(slope).toBeCloseTo(2, 0);
    expect(intercept).toBeCloseTo(-1, 0);
    expect(Math.abs(model.weights[2]!)).toBeLessThan(0.1);
    expect(predictLogistic(model, [1, 0])).toBeGreaterThan(predictLogistic(model, [0, 0]));
  });

  it("shrinks the weights, not the intercept's fit to the base rate, as the penalty grows", () => {
    const { X, y } = drawn(300, 2);
    const loose = fitLogistic(X, y, 0.01);
    const tight = fitLogistic(X, y, 1e4);
    expect(Math.abs(tight.weights[1]!)).toBeLessThan(Math.abs(loose.weights[1]!) / 20);
    const rate = y.filter(Boolean).length / y.length;
    expect(predictLogistic(tight, X[0]!)).toBeCloseTo(rate, 1);
  });

  it("scores every row out of fold: with one row per fold, by the fit on all the others", () => {
    const { X, y } = drawn(40, 3);
    const scores = outOfFold(X, y, 40, 0, 1);
    for (const i of [0, 17, 39]) {
      const others = X.flatMap((_, j) => (j === i ? [] : [j]));
      const model = fitLogistic(
        others.map((j) => X[j]!),
        others.map((j) => y[j]!),
        1,
      );
      expect(scores[i]).toBeCloseTo(predictLogistic(model, X[i]!), 10);
    }
    expect(outOfFold(X, y, 10, 5, 1)).toEqual(outOfFold(X, y, 10, 5, 1));
  });

  it("cannot learn labels that follow nothing in the rows, out of fold", () => {
    const { X } = drawn(400, 4);
    const y = X.map((_, i) => i % 2 === 0);
    const scores = outOfFold(X, y, 10, 0, 1);
    const meanOf = (want: boolean) => {
      const picked = scores.filter((_, i) => y[i] === want);
      return picked.reduce((a, b) => a + b, 0) / picked.length;
    };
    expect(Math.abs(meanOf(true) - meanOf(false))).toBeLessThan(0.05);
  });

  it("refuses rows without labels", () => {
    expect(() => fitLogistic([[1]], [], 1)).toThrow(/one label per row/);
  });

  it("reads the service's score, the crop's mass, the distance and the views' agreement", () => {
    const features = learnedFeatures({
      views: [
        [0.8, 0.2],
        [0.3, 0.7],
      ],
      mean: [0.75, 0.25],
      mass: 0.5,
      distance: Math.E ** 3,
    });
    expect(features[0]).toBeCloseTo(Math.log(3), 10);
    expect(features[1]).toBeCloseTo(0, 10);
    expect(features[2]).toBeCloseTo(3, 10);
    expect(features[3]).toBe(0);
  });
});
