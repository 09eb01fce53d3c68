import type { DiagnosisResult } from "../../src/diagnosis/types.js";
import { pct, type Row, type Table } from "./report.js";
import type { Observation } from "./run.js";
import { isRight } from "./sources.js";
import { isLeaf } from "./split.js";

/**
 * Expected calibration error (Guo et al. 2017): the gap between confidence and accuracy, averaged over
 * equal-width confidence bins weighted by how many predictions fall in each; 15 bins, the common choice since
 * that paper. Only the served path reports it (evaluate.py does not).
 */
export function expectedCalibrationError(
  predictions: { confidence: number; correct: boolean }[],
  bins = 15,
): number {
  const count = new Array<number>(bins).fill(0);
  const confidence = new Array<number>(bins).fill(0);
  const correct = new Array<number>(bins).fill(0);
  for (const p of predictions) {
    // Bins are (lo, hi]: a confidence of exactly 0 cannot be the top of a softmax, 1 falls in the last bin.
    const bin = Math.min(bins - 1, Math.max(0, Math.ceil(p.confidence * bins) - 1));
    count[bin]! += 1;
    confidence[bin]! += p.confidence;
    if (p.correct) correct[bin]! += 1;
  }
  let error = 0;
  for (let b = 0; b < bins; b++) {
    if (count[b] === 0) continue;
    error +=
      (count[b]! / predictions.length) * Math.abs(correct[b]! / count[b]! - confidence[b]! / count[b]!);
  }
  return error;
}

const RUNS: [string, (o: Observation) => DiagnosisResult][] = [
  ["given", (o) => o.withCrop],
  ["not given", (o) => o.withoutCrop],
];

/**
 * Calibration of what a client reads: the first candidate's confidence against whether it is the label, over the
 * leaf photos that got a reading (a "not a plant" answer carries no confidence), per source.
 */
export function calibrationTable(groups: [string, Observation[]][]): Table {
  const rows: Row[] = [];
  for (const [source, items] of groups) {
    const leaves = items.filter((o) => isLeaf(o.sample));
    if (leaves.length === 0) continue;
    for (const [run, pick] of RUNS) {
      const read = leaves
        .map((o) => ({ result: pick(o), label: o.sample.label }))
        .filter(({ result }) => result.candidates.length > 0);
      const predictions = read.map(({ result, label }) => ({
        confidence: result.candidates[0]!.confidence,
        correct: isRight(result, label),
      }));
      const meanConfidence = predictions.reduce((sum, p) => sum + p.confidence, 0);
      rows.push([
        source,
        run,
        `${read.length} of ${leaves.length}`,
        pct(meanConfidence, predictions.length),
        pct(predictions.filter((p) => p.correct).length, predictions.length),
        predictions.length === 0 ? "–" : pct(expectedCalibrationError(predictions), 1),
      ]);
    }
  }
  return {
    title:
      "Calibration of the top confidence (`candidates[0].confidence`; expected calibration error, 15 bins)",
    head: ["source", "crop_type", "photos with a reading", "mean confidence", "top-1", "ECE"],
    rows,
  };
}
