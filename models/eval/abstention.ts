/**
 * Tables for choosing how the service abstains, read from the API's results on the VAL split only (the test
 * split chooses nothing): how often the answered photos are right for each crop, and how right the most
 * confident photos are when they are ranked by other scores than the one the service thresholds.
 */
import { cropOfClass } from "../../src/diagnosis/crops.js";
import type { DiagnosisResult } from "../../src/diagnosis/types.js";
import { pct, type Table } from "./report.js";
import type { Observation } from "./run.js";
import { answeredRight, isRight } from "./sources.js";

/** A score for how sure a result is; higher is surer. */
export type Score = (result: DiagnosisResult) => number;

const confidence = (result: DiagnosisResult, rank: number) => result.candidates[rank]?.confidence ?? 0;

export const SCORES: [string, Score][] = [
  ["first candidate's confidence (the service's rule)", (r) => confidence(r, 0)],
  ["margin over the second candidate", (r) => confidence(r, 0) - confidence(r, 1)],
];

export const COVERAGES = [0.1, 0.2, 0.3, 0.4];

/**
 * The share right among the `coverage` most sure photos by `score` (ties broken by list order, so a rerun reads
 * the same), each photo's result as `pick` reads it.
 */
export function rightAtCoverage(
  observations: Observation[],
  pick: (o: Observation) => DiagnosisResult,
  score: Score,
  coverage: number,
): { right: number; taken: number } {
  const taken = Math.round(coverage * observations.length);
  const ranked = observations
    .map((o, i) => ({ o, i, s: score(pick(o)) }))
    .sort((a, b) => b.s - a.s || a.i - b.i)
    .slice(0, taken);
  return { right: ranked.filter(({ o }) => isRight(pick(o), o.sample.label)).length, taken };
}

export function coverageTable(observations: Observation[], pick: (o: Observation) => DiagnosisResult): Table {
  return {
    title: `Right among the most sure photos, by score (${observations.length} photos, crop given)`,
    head: ["score", ...COVERAGES.map((c) => `most sure ${Math.round(100 * c)} %`)],
    rows: SCORES.map(([name, score]) => [
      name,
      ...COVERAGES.map((c) => {
        const { right, taken } = rightAtCoverage(observations, pick, score, c);
        return `${pct(right, taken)} (${right} of ${taken})`;
      }),
    ]),
  };
}

export function perCropTable(observations: Observation[], pick: (o: Observation) => DiagnosisResult): Table {
  const crops = [...new Set(observations.map((o) => cropOfClass(o.sample.label)))].sort();
  return {
    title: "Answered photos per crop (crop given)",
    head: ["crop", "photos", "top-1", "answered", "right when answered"],
    rows: crops.map((crop) => {
      const items = observations.filter((o) => cropOfClass(o.sample.label) === crop);
      const { answered, right } = answeredRight(items, pick);
      return [
        crop ?? "–",
        items.length,
        pct(items.filter((o) => isRight(pick(o), o.sample.label)).length, items.length),
        pct(answered, items.length),
        `${pct(right, answered)} (${right} of ${answered})`,
      ];
    }),
  };
}
