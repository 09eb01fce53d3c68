import { describe, expect, it } from "vitest";
import { expectedCalibrationError } from "../../models/eval/calibration.js";

describe("expected calibration error", () => {
  it("is zero when confidence matches accuracy in every bin", () => {
    const predictions = [
      ...Array.from({ length: 8 }, (_, i) => ({ confidence: 0.75, correct: i < 6 })),
      ...Array.from({ length: 4 }, () => ({ confidence: 1, correct: true })),
    ];
    expect(expectedCalibrationError(predictions)).toBeCloseTo(0, 10);
  });

  it("weights each bin's gap by its share of the predictions", () => {
    // 3 over-confident answers at 0.9 (1 right) and 1 wrong at 0.5: 3/4 × |1/3 - 0.9| + 1/4 × |0 - 0.5|.
    const predictions = [
      { confidence: 0.9, correct: true },
      { confidence: 0.9, correct: false },
      { confidence: 0.9, correct: false },
      { confidence: 0.5, correct: false },
    ];
    expect(expectedCalibrationError(predictions)).toBeCloseTo(0.75 * (0.9 - 1 / 3) + 0.25 * 0.5, 10);
  });
});
