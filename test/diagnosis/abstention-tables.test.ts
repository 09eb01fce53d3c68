import { describe, expect, it } from "vitest";
import { coverageTable, perCropTable, rightAtCoverage, SCORES } from "../../models/eval/abstention.js";
import type { Observation } from "../../models/eval/run.js";
import type { DiagnosisResult, Outcome } from "../../src/diagnosis/types.js";

/** A result with ranked candidates [id, confidence]. */
function result(outcome: Outcome, ...candidates: [string, number][]): DiagnosisResult {
  return {
    outcome,
    is_plant: true,
    candidates: candidates.map(([id, confidence]) => ({ id, name: id, confidence })),
  } as DiagnosisResult;
}

function observation(label: string, withCrop: DiagnosisResult): Observation {
  return {
    sample: { file: `x/${label}.jpg`, label, source: "field_plantdoc" },
    withCrop,
    withoutCrop: withCrop,
  };
}

const withCrop = (o: Observation) => o.withCrop;
const [byConfidence, byMargin] = SCORES.map(([, score]) => score) as [
  (typeof SCORES)[0][1],
  (typeof SCORES)[0][1],
];

// Ten photos: the two most confident are wrong, torn between two diseases; the clearest margins are right.
const observations: Observation[] = [
  observation(
    "tomato__late_blight",
    result("diagnosed", ["tomato__early_blight", 0.6], ["tomato__late_blight", 0.39]),
  ),
  observation(
    "tomato__leaf_mold",
    result("diagnosed", ["tomato__target_spot", 0.59], ["tomato__leaf_mold", 0.4]),
  ),
  observation("tomato__healthy", result("healthy", ["tomato__healthy", 0.58], ["tomato__leaf_mold", 0.02])),
  observation(
    "potato__late_blight",
    result("unsure", ["potato__late_blight", 0.57], ["potato__healthy", 0.03]),
  ),
  ...Array.from({ length: 6 }, (_, i) =>
    observation(
      "maize__common_rust",
      result("unsure", ["maize__common_rust", 0.5 - i / 100], ["maize__healthy", 0.45]),
    ),
  ),
];

describe("abstention study on val (models/eval/val-abstention.ts)", () => {
  it("counts the right answers among the most sure photos of each score", () => {
    expect(rightAtCoverage(observations, withCrop, byConfidence, 0.2)).toEqual({ right: 0, taken: 2 });
    expect(rightAtCoverage(observations, withCrop, byMargin, 0.2)).toEqual({ right: 2, taken: 2 });
    expect(rightAtCoverage(observations, withCrop, byConfidence, 0.4)).toEqual({ right: 2, taken: 4 });
  });

  it("breaks ties by list order, so a rerun ranks the same photos first", () => {
    const tied = [
      observation("maize__healthy", result("unsure", ["maize__healthy", 0.5])),
      observation("maize__common_rust", result("unsure", ["maize__healthy", 0.5])),
    ];
    expect(rightAtCoverage(tied, withCrop, byConfidence, 0.5)).toEqual({ right: 1, taken: 1 });
    expect(rightAtCoverage(tied.reverse(), withCrop, byConfidence, 0.5)).toEqual({ right: 0, taken: 1 });
  });

  it("reads the answered share and its accuracy per crop, unsure photos counted in top-1 only", () => {
    const rows = perCropTable(observations, withCrop).rows;
    expect(rows).toEqual([
      ["maize", 6, "100.0 %", "0.0 %", "– (0 of 0)"],
      ["potato", 1, "100.0 %", "0.0 %", "– (0 of 0)"],
      ["tomato", 3, "33.3 %", "100.0 %", "33.3 % (1 of 3)"],
    ]);
  });

  it("prints one row per score and one column per coverage", () => {
    const table = coverageTable(observations, withCrop);
    expect(table.rows).toHaveLength(SCORES.length);
    expect(table.head).toEqual([
      "score",
      "most sure 10 %",
      "most sure 20 %",
      "most sure 30 %",
      "most sure 40 %",
    ]);
    expect(table.rows[0]?.[2]).toBe("0.0 % (0 of 2)");
  });
});
