import { describe, expect, it } from "vitest";
import { rejectionTable } from "../../models/eval/rejection.js";
import type { Observation } from "../../models/eval/run.js";
import { bySource, withCropTable } from "../../models/eval/sources.js";
import { evenSample, parseCsv, type Sample, statedCrop } from "../../models/eval/split.js";
import type { DiagnosisResult, Outcome } from "../../src/diagnosis/types.js";

/** The fields of a result the tables read. */
function result(outcome: Outcome, top?: string): DiagnosisResult {
  return {
    outcome,
    is_plant: outcome !== "not_plant",
    candidates: top ? [{ id: top, name: top, confidence: 0.9 }] : [],
  } as DiagnosisResult;
}

const sample = (label: string, source: string, file = `x/${label}.jpg`): Sample => ({ file, label, source });

describe("photos measured by npm run eval", () => {
  it("reads the manifests' quoted box lists as one field", () => {
    const rows = parseCsv(
      'file,leaf_boxes,width\na.jpg,"[[0.1, 0.2, 0.3, 0.4], [0, 0, 1, 1]]",416\r\nb.jpg,"[]",256\n',
    );
    expect(rows).toEqual([
      { file: "a.jpg", leaf_boxes: "[[0.1, 0.2, 0.3, 0.4], [0, 0, 1, 1]]", width: "416" },
      { file: "b.jpg", leaf_boxes: "[]", width: "256" },
    ]);
  });

  it("keeps at most --limit photos of each source, evenly spaced, and every photo of a smaller source", () => {
    const lab = Array.from({ length: 10 }, (_, i) => sample(`tomato__healthy`, "lab", `lab/${i}.jpg`));
    const rice = [sample("rice__brown_spot", "white_bg_rice")];
    const kept = evenSample([...lab, ...rice], 5);
    expect(kept.map((s) => s.file)).toEqual([
      "lab/0.jpg",
      "lab/2.jpg",
      "lab/4.jpg",
      "lab/6.jpg",
      "lab/8.jpg",
      "x/rice__brown_spot.jpg",
    ]);
    expect(evenSample([...lab, ...rice], undefined)).toHaveLength(11);
  });

  it("states the crop a farmer would: the class's crop, an other plant's own name, nothing for a non-plant", () => {
    expect(statedCrop(sample("maize__common_rust", "field_plantdoc"))).toBe("maize");
    expect(statedCrop(sample("other_plant", "other_plant", "other-plants/grape_leaf_black_rot/a.jpg"))).toBe(
      "grape",
    );
    expect(statedCrop(sample("non_plant", "non_plant"))).toBeUndefined();
  });
});

describe("tables of npm run eval", () => {
  const observations: Observation[] = [
    // Right with the crop, wrong without it.
    {
      sample: sample("tomato__late_blight", "field_plantdoc"),
      withCrop: result("diagnosed", "tomato__late_blight"),
      withoutCrop: result("diagnosed", "potato__late_blight"),
    },
    // Unsure, but its best reading is right: top-1 counts it, the answered share does not.
    {
      sample: sample("tomato__healthy", "field_plantdoc"),
      withCrop: result("unsure", "tomato__healthy"),
      withoutCrop: result("unsure", "tomato__healthy"),
    },
    // Called not a plant: wrong, and no reading.
    {
      sample: sample("tomato__leaf_mold", "field_plantdoc"),
      withCrop: result("not_plant"),
      withoutCrop: result("not_plant"),
    },
    // Answered healthy, wrongly.
    {
      sample: sample("tomato__mosaic_virus", "field_plantdoc"),
      withCrop: result("healthy", "tomato__healthy"),
      withoutCrop: result("healthy", "tomato__healthy"),
    },
    {
      sample: sample("non_plant", "non_plant"),
      withCrop: result("not_plant"),
      withoutCrop: result("not_plant"),
    },
    {
      sample: sample("non_plant", "non_plant"),
      withCrop: result("diagnosed", "maize__common_rust"),
      withoutCrop: result("diagnosed", "maize__common_rust"),
    },
    {
      sample: sample("other_plant", "other_plant"),
      withCrop: result("crop_not_supported"),
      withoutCrop: result("diagnosed", "tomato__early_blight"),
    },
  ];

  it("counts top-1 over readings, and accuracy over the photos answered", () => {
    const table = withCropTable(bySource(observations), "source", "t");
    expect(table.rows[0]).toEqual([
      "field_plantdoc",
      4,
      "50.0 %", // late blight and the unsure healthy leaf
      "25.0 %", // the unsure healthy leaf only
      "50.0 %", // diagnosed + healthy
      "50.0 %", // late blight right, mosaic called healthy
      "25.0 %",
      "25.0 %",
      "0.0 %",
      "25.0 %",
    ]);
    expect(table.rows.map((r) => r[0])).toEqual(["field_plantdoc", "other_plant", "non_plant"]);
    // No class is right for a photo of something else: top-1 is not given.
    expect(table.rows[2]![2]).toBe("–");
  });

  it("reports non-plant photos called a plant and other plants called not supported", () => {
    const rows = rejectionTable(observations).rows;
    expect(rows[0]).toEqual([
      "non-plant, no crop_type",
      2,
      "50.0 %",
      "50.0 %",
      "0.0 %",
      "50.0 %",
      "0.0 %",
      "0.0 %",
    ]);
    expect(rows[1]!.slice(1, 6)).toEqual([1, "100.0 %", "0.0 %", "100.0 %", "0.0 %"]);
    expect(rows[2]!.slice(1, 6)).toEqual([1, "100.0 %", "0.0 %", "0.0 %", "100.0 %"]);
  });
});
