/**
 * What the service answers for photos it must not diagnose: photos with no plant, and leaves of crops it does
 * not cover. Every disease named here is a wrong answer.
 */

import { NON_PLANT_CLASS, OTHER_PLANT_CLASS } from "../../src/diagnosis/model/metadata.js";
import type { DiagnosisResult, Outcome } from "../../src/diagnosis/types.js";
import { pct, type Row, type Table } from "./report.js";
import type { Observation } from "./run.js";

function row(name: string, results: DiagnosisResult[]): Row {
  const share = (outcome: Outcome) =>
    pct(results.filter((r) => r.outcome === outcome).length, results.length);
  return [
    name,
    results.length,
    pct(results.filter((r) => r.is_plant).length, results.length),
    share("not_plant"),
    share("crop_not_supported"),
    share("diagnosed"),
    share("healthy"),
    share("unsure"),
  ];
}

export function rejectionTable(observations: Observation[]): Table {
  const nonPlants = observations.filter((o) => o.sample.label === NON_PLANT_CLASS);
  const others = observations.filter((o) => o.sample.label === OTHER_PLANT_CLASS);
  return {
    title:
      "Photos the service must not diagnose (a disease named or a leaf called healthy is a wrong answer; the target for non-plant photos called a plant is ≤ 5 %)",
    head: [
      "photos",
      "n",
      "called a plant (`is_plant`)",
      "not a plant",
      "crop not supported",
      "a disease named",
      "called healthy",
      "unsure",
    ],
    rows: [
      row(
        "non-plant, no crop_type",
        nonPlants.map((o) => o.withoutCrop),
      ),
      row(
        "other plants, crop_type = their own name (e.g. grape)",
        others.map((o) => o.withCrop),
      ),
      row(
        "other plants, no crop_type",
        others.map((o) => o.withoutCrop),
      ),
    ],
  };
}
