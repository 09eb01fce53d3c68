/**
 * A learned score for the val study models/eval/val-views.ts: an L2-penalised logistic regression that predicts
 * whether the service's answer is right from what the service read (its score, the probability narrowing to the
 * crop discarded, the distance, whether the views agree). Fitted by Newton's method: four features and a few
 * hundred photos converge in a handful of steps, with no learning rate to choose.
 */
import { Matrix, solve } from "ml-matrix";
import { seededRandom } from "../../test/support/random.js";
import { type PhotoReading, served, viewsAgree } from "./view-scores.js";

const EPS = 1e-6;
const logit = (p: number) => {
  const q = Math.min(1 - EPS, Math.max(EPS, p));
  return Math.log(q / (1 - q));
};
const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));

export const LEARNED_FEATURES = [
  "logit of the service's score",
  "logit of the crop's mass",
  "log distance",
  "views agree",
];

export function learnedFeatures(photo: PhotoReading): number[] {
  return [
    logit(served(photo).score),
    logit(photo.mass),
    Math.log(Math.max(photo.distance, EPS)),
    viewsAgree(photo) ? 1 : 0,
  ];
}

export interface LogisticModel {
  /** Per feature: the fit set's mean and standard deviation, which standardise it. */
  centre: number[];
  scale: number[];
  /** Intercept first, then one weight per standardised feature. */
  weights: number[];
}

function standardised(model: Pick<LogisticModel, "centre" | "scale">, x: number[]): number[] {
  return [1, ...x.map((v, j) => (v - model.centre[j]!) / model.scale[j]!)];
}

/** Minimises the log loss plus penalty/2 × the squared weights (not the intercept). */
export function fitLogistic(X: number[][], y: boolean[], penalty: number): LogisticModel {
  if (X.length === 0 || X.length !== y.length) throw new Error("one label per row, and at least one row");
  const d = X[0]!.length;
  const centre = Array.from({ length: d }, (_, j) => X.reduce((s, x) => s + x[j]!, 0) / X.length);
  const scale = centre.map((m, j) => {
    const sd = Math.sqrt(X.reduce((s, x) => s + (x[j]! - m) ** 2, 0) / X.length);
    return sd > 0 ? sd : 1; // a constant feature stays at 0 after centring
  });
  const Z = new Matrix(X.map((x) => standardised({ centre, scale }, x)));
  const Zt = Z.transpose();
  const penaltyDiagonal = Matrix.diag([0, ...new Array<number>(d).fill(penalty)]);
  let w = Matrix.zeros(d + 1, 1);
  for (let step = 0; step < 100; step++) {
    const p = Z.mmul(w).getColumn(0).map(sigmoid);
    const residual = Matrix.columnVector(p.map((pi, i) => pi - (y[i] ? 1 : 0)));
    const gradient = Z.transposeMultiply(residual).add(penaltyDiagonal.mmul(w));
    const hessian = Zt.mmulByTranspose(p.map((pi) => pi * (1 - pi))).add(penaltyDiagonal);
    const delta = solve(hessian, gradient);
    w = w.sub(delta);
    if (delta.norm("max") < 1e-10) break;
  }
  return { centre, scale, weights: w.getColumn(0) };
}

/** The fitted probability that the answer is right. */
export function predictLogistic(model: LogisticModel, x: number[]): number {
  return sigmoid(standardised(model, x).reduce((s, v, j) => s + v * model.weights[j]!, 0));
}

/** Every row scored by the fit on the other folds (rows dealt to `folds` folds by a seeded shuffle). */
export function outOfFold(
  X: number[][],
  y: boolean[],
  folds: number,
  seed: number,
  penalty: number,
): number[] {
  const random = seededRandom(seed);
  const order = X.map((_, i) => ({ i, key: random() })).sort((a, b) => a.key - b.key);
  const fold = new Array<number>(X.length);
  order.forEach(({ i }, position) => {
    fold[i] = position % folds;
  });
  const scores = new Array<number>(X.length);
  for (let f = 0; f < folds; f++) {
    const train = X.flatMap((_, i) => (fold[i] === f ? [] : [i]));
    const model = fitLogistic(
      train.map((i) => X[i]!),
      train.map((i) => y[i]!),
      penalty,
    );
    X.forEach((x, i) => {
      if (fold[i] === f) scores[i] = predictLogistic(model, x);
    });
  }
  return scores;
}
