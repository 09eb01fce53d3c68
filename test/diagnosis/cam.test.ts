import { describe, expect, it } from "vitest";
import { camBoxes } from "../../src/diagnosis/model/cam.js";

const CAM = 8;

/** Two classes of 8×8 maps; class 1 fires on the cells given as [x, y, value]. */
function camWith(cells: [number, number, number][]): Float32Array {
  const cam = new Float32Array(2 * CAM * CAM).fill(-1);
  for (let i = CAM * CAM; i < 2 * CAM * CAM; i++) cam[i] = 0.1;
  for (const [x, y, v] of cells) cam[CAM * CAM + y * CAM + x] = v;
  return cam;
}

describe("boxes from class activation maps", () => {
  // A 4:3 landscape photo: resized to 171×128, the model saw the centre 128×128 starting at x = 22.
  const geometry = { resized: { width: 171, height: 128 }, crop: { left: 22, top: 0, size: 128 } };

  it("boxes each hot region, in 0..1 of the whole photo, strongest first", () => {
    const cam = camWith([
      [1, 5, 4],
      [2, 5, 4],
      [1, 6, 4],
      [2, 6, 4],
      [6, 1, 3.2],
      [6, 2, 3.2],
      [5, 1, 3.2],
      [5, 2, 3.2],
    ]);
    const boxes = camBoxes(cam, CAM, 1, "late_blight", 0.9, geometry);
    expect(boxes).toHaveLength(2);
    for (const { bbox, name, confidence } of boxes) {
      expect(name).toBe("late_blight");
      expect(confidence).toBeGreaterThan(0);
      expect(confidence).toBeLessThanOrEqual(0.9);
      for (const v of bbox) expect(v).toBeGreaterThanOrEqual(0);
      expect(bbox[0] + bbox[2]).toBeLessThanOrEqual(1);
      expect(bbox[1] + bbox[3]).toBeLessThanOrEqual(1);
    }
    const [first, second] = boxes;
    expect(first!.confidence).toBeGreaterThan(second!.confidence);
    // The strong 2×2-cell blob sits at crop pixels ~16..48 × 80..112; mapped past the 22-pixel crop offset.
    const centreX = (first!.bbox[0] + first!.bbox[2] / 2) * 171;
    const centreY = (first!.bbox[1] + first!.bbox[3] / 2) * 128;
    expect(centreX).toBeCloseTo(22 + 32, -1);
    expect(centreY).toBeCloseTo(96, -1);
    // The weak blob is top right.
    expect(second!.bbox[0]).toBeGreaterThan(0.5);
    expect(second!.bbox[1]).toBeLessThan(0.35);
  });

  it("gives no box when the class map never fires", () => {
    const cam = new Float32Array(2 * CAM * CAM).fill(-0.5);
    expect(camBoxes(cam, CAM, 1, "rust", 0.8, geometry)).toEqual([]);
  });
});
