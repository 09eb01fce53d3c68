import { describe, expect, it } from "vitest";
import type { LeafView } from "../../src/diagnosis/analyse.js";
import { leafDetections } from "../../src/diagnosis/detections.js";
import type { Leaf } from "../../src/diagnosis/model/leaves.js";
import { centreView } from "../../src/diagnosis/model/preprocess.js";

const CLASSES = [
  "potato__early_blight",
  "potato__healthy",
  "tomato__early_blight",
  "tomato__late_blight",
  "other_plant",
  "non_plant",
];

/** A crop view of `leaf` whose calibrated probabilities are `p` (classes in CLASSES order). */
function crop(leaf: Leaf, p: number[]): LeafView {
  return {
    leaf,
    window: { x: leaf.x, y: leaf.y, side: Math.max(leaf.w, leaf.h) },
    logits: new Float32Array(p.length),
    probabilities: Float64Array.from(p),
  };
}

// A square 200 × 200 photo seen at 100 px: the centre view is the whole photo.
const view = centreView({ data: new Uint8Array(200 * 200 * 3), width: 200, height: 200 }, 100);
const blightLeaf = { x: 0.1, y: 0.2, w: 0.3, h: 0.4, heat: 0.9 };
const spotLeaf = { x: 0.5, y: 0.5, w: 0.2, h: 0.2, heat: 0.8 };
const crops = [
  // The answer's crop: reads tomato late blight; among the potato classes, early blight.
  crop(spotLeaf, [0.2, 0.1, 0.1, 0.4, 0.1, 0.1]),
  // A leaf read for its box alone (include_bbox): tomato late blight too, more surely.
  crop(blightLeaf, [0.1, 0.05, 0.05, 0.6, 0.1, 0.1]),
];

describe("detections from the leaf crops", () => {
  it("boxes the leaves whose own crop reads the named class best, with that crop's probability, strongest first", () => {
    const boxes = leafDetections(crops, view, CLASSES, "tomato__late_blight", null);
    expect(boxes).toEqual([
      { name: "late_blight", bbox: [0.1, 0.2, 0.3, 0.4], confidence: 0.75 },
      { name: "late_blight", bbox: [0.5, 0.5, 0.2, 0.2], confidence: 0.5 },
    ]);
    expect(leafDetections(crops, view, CLASSES, "tomato__early_blight", null)).toEqual([]);
  });

  it("reads each crop among the stated crop's classes only", () => {
    const boxes = leafDetections(crops, view, CLASSES, "potato__early_blight", "potato");
    // Equally sure: in the order read, the answer's crop first.
    expect(boxes.map((b) => b.bbox)).toEqual([
      [0.5, 0.5, 0.2, 0.2],
      [0.1, 0.2, 0.3, 0.4],
    ]);
    expect(boxes.map((b) => b.confidence)).toEqual([0.667, 0.667]);
    expect(leafDetections(crops, view, CLASSES, "tomato__late_blight", "potato")).toEqual([]);
  });

  it("picks the stated crop's likeliest class by its probability, however little of the leaf's belief it holds", () => {
    // Among the potato classes: early blight 0.3, healthy 0.35 (of 0.65): healthy, so no early blight box.
    const healthyLeaf = [crop(spotLeaf, [0.3, 0.35, 0.05, 0.1, 0.1, 0.1])];
    expect(leafDetections(healthyLeaf, view, CLASSES, "potato__early_blight", "potato")).toEqual([]);
    expect(leafDetections(healthyLeaf, view, CLASSES, "potato__healthy", "potato")).toEqual([
      { name: "healthy", bbox: [0.5, 0.5, 0.2, 0.2], confidence: 0.538 },
    ]);
  });
});
