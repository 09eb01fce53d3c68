import { describe, expect, it } from "vitest";
import {
  type Box,
  type BoxedPhoto,
  boxTable,
  detectionBoxes,
  iou,
  matchCount,
  parseBoxes,
} from "../../models/eval/boxes.js";

const detection = (bbox: Box, confidence = 0.9) => ({ name: "late_blight", bbox, confidence });

describe("box matching of npm run eval", () => {
  it("measures intersection over union", () => {
    expect(iou([0, 0, 0.5, 0.5], [0, 0, 0.5, 0.5])).toBeCloseTo(1, 10);
    // Half of one box over a same-sized box: overlap 0.125, union 0.375.
    expect(iou([0, 0, 0.5, 0.5], [0.25, 0, 0.5, 0.5])).toBeCloseTo(1 / 3, 10);
    expect(iou([0, 0, 0.2, 0.2], [0.5, 0.5, 0.2, 0.2])).toBe(0);
    // Touching edges share no area.
    expect(iou([0, 0, 0.5, 0.5], [0.5, 0, 0.5, 0.5])).toBe(0);
  });

  it("matches at IoU 0.5 and not below", () => {
    const leaf: Box = [0, 0, 0.5, 0.5];
    // The leaf's upper half: IoU 0.125 / 0.25, exactly 0.5 in binary too.
    expect(matchCount([{ box: [0, 0, 0.5, 0.25], confidence: 1 }], [leaf])).toBe(1);
    expect(matchCount([{ box: [0, 0, 0.5, 0.24], confidence: 1 }], [leaf])).toBe(0);
  });

  it("lets one leaf box match one detection only, the most confident first", () => {
    const leaf: Box = [0.1, 0.1, 0.4, 0.4];
    const near: Box = [0.12, 0.1, 0.4, 0.4];
    expect(
      matchCount(
        [
          { box: leaf, confidence: 0.5 },
          { box: near, confidence: 0.8 },
        ],
        [leaf],
      ),
    ).toBe(1);
    // Two leaves side by side, two detections each on one of them: both match.
    const left: Box = [0, 0, 0.45, 0.9];
    const right: Box = [0.5, 0, 0.45, 0.9];
    expect(
      matchCount(
        [
          { box: [0.52, 0.02, 0.43, 0.85], confidence: 0.6 },
          { box: [0.01, 0, 0.44, 0.88], confidence: 0.7 },
        ],
        [left, right],
      ),
    ).toBe(2);
  });

  // Two overlapping leaves a and b (IoU 0.54); P lies between them (IoU 0.75 with a, 0.72 with b), Q on a only
  // (0.9 with a, 0.46 with b).
  const a: Box = [0, 0, 0.5, 0.5];
  const b: Box = [0.15, 0, 0.5, 0.5];
  const p: Box = [0.07, 0, 0.5, 0.5];
  const q: Box = [0, 0, 0.45, 0.5];

  it("gives a detection the leaf box it overlaps most, not the first one over the threshold", () => {
    // b itself detected first takes b (IoU 1), not a (0.54): a is left for Q.
    expect(
      matchCount(
        [
          { box: b, confidence: 0.9 },
          { box: q, confidence: 0.8 },
        ],
        [a, b],
      ),
    ).toBe(2);
  });

  it("matches the most confident detections first, whatever their order in the answer", () => {
    // Q first takes a and P then gets b; P first takes a and leaves Q nothing.
    const qConfident = [
      { box: p, confidence: 0.5 },
      { box: q, confidence: 0.9 },
    ];
    const pConfident = [
      { box: q, confidence: 0.5 },
      { box: p, confidence: 0.9 },
    ];
    expect(matchCount(qConfident, [a, b])).toBe(2);
    expect(matchCount(pConfident, [a, b])).toBe(1);
  });

  it("reads the manifest's leaf_boxes and refuses anything else", () => {
    expect(parseBoxes("[[0.1942, 0.0125, 0.5198, 0.8063]]")).toEqual([[0.1942, 0.0125, 0.5198, 0.8063]]);
    expect(() => parseBoxes("[[0.1, 0.2]]")).toThrow(/leaf_boxes/);
  });

  it("reads detections as fractions of the photo, as the spec gives them, and converts pixel boxes", () => {
    const photo = { width: 400, height: 200 };
    expect(detectionBoxes([detection([0.1, 0.2, 0.3, 0.4])], photo)).toEqual({
      inPixels: false,
      boxes: [{ box: [0.1, 0.2, 0.3, 0.4], confidence: 0.9 }],
    });
    expect(detectionBoxes([detection([40, 40, 120, 80])], photo)).toEqual({
      inPixels: true,
      boxes: [{ box: [0.1, 0.2, 0.3, 0.4], confidence: 0.9 }],
    });
  });

  it("reports precision over detections and recall over leaf boxes", () => {
    const leaves: Box[] = [
      [0, 0, 0.4, 0.4],
      [0.5, 0.5, 0.4, 0.4],
    ];
    const photos: BoxedPhoto[] = [
      // One leaf found, one detection on soil: precision 1/2, recall 1/2.
      {
        detections: [detection([0, 0, 0.4, 0.4]), detection([0.5, 0, 0.3, 0.2], 0.4)],
        truth: leaves,
        width: 416,
        height: 416,
        rightDisease: true,
      },
      // No box at all, wrong disease named: both leaves missed.
      { detections: [], truth: leaves, width: 416, height: 416, rightDisease: false },
    ];
    const table = boxTable(photos, "test");
    expect(table.rows[0]).toEqual(["all", 2, "50.0 %", 2, 4, "50.0 %", "25.0 %"]);
    expect(table.rows[1]).toEqual(["the right disease named", 1, "100.0 %", 2, 2, "50.0 %", "50.0 %"]);
  });
});
