/**
 * Calibrated class probabilities: softmax of the logits divided by the temperature fitted on the validation
 * split (temperature scaling, Guo et al. 2017). Subtracting the maximum keeps exp() from overflowing.
 */
export function calibratedProbabilities(logits: ArrayLike<number>, temperature: number): Float64Array {
  const n = logits.length;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) max = Math.max(max, logits[i]! / temperature);
  const probabilities = new Float64Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const e = Math.exp(logits[i]! / temperature - max);
    probabilities[i] = e;
    total += e;
  }
  for (let i = 0; i < n; i++) probabilities[i]! /= total;
  return probabilities;
}
