/**
 * Expected calibration error (Guo et al. 2017): the gap between confidence and accuracy, averaged over
 * equal-width confidence bins weighted by how many predictions fall in each. 15 bins, as evaluate.py uses,
 * so the served path and the PyTorch twin report comparable numbers.
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
