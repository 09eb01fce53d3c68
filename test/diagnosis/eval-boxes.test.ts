import { describe, expect, it } from "vitest";
import { boxTable, leafMask } from "../../models/eval/boxes.js";
import type { Analysis } from "../../src/diagnosis/analyse.js";

const SIZE = 144;
const CAM = 9;

/** A grey photo with a green leaf filling the square [from, to) on both axes. */
function photo(from: number, to: number): { data: Uint8Array; width: number; height: number } {
  const data = new Uint8Array(SIZE * SIZE * 3).fill(128);
  for (let y = from; y < to; y++) {
    for (let x = from; x < to; x++) data.set([60, 140, 40], (y * SIZE + x) * 3);
  }
  return { data, width: SIZE, height: SIZE };
}

/** An analysis whose only class map fires on the CAM cells [from, to) on both axes. */
function analysisOf(image: ReturnType<typeof photo>, from: number, to: number): Analysis {
  const cam = new Float32Array(CAM * CAM);
  for (let y = from; y < to; y++) for (let x = from; x < to; x++) cam[y * CAM + x] = 5;
  return {
    model: {
      output: { logits: new Float32Array(1), cam, camSize: CAM },
      view: { tensor: new Float32Array(0), resized: image, crop: { left: 0, top: 0, size: SIZE } },
    },
  } as unknown as Analysis;
}

describe("box evaluation of npm run eval", () => {
  it("finds the leaf of a plain-background photo by its colour", () => {
    const mask = leafMask(photo(32, 112));
    expect(mask[70 * SIZE + 70]).toBe(1);
    expect(mask[5 * SIZE + 5]).toBe(0);
    expect(mask.reduce((a, b) => a + b, 0)).toBe(80 * 80);
  });

  it("tells a box on the leaf from a box on the background", () => {
    const image = photo(48, 96); // the leaf: the middle third, CAM cells 3-5
    const onLeaf = boxTable([{ label: "x", classIndex: 0, analysis: analysisOf(image, 3, 6) }]);
    const offLeaf = boxTable([{ label: "x", classIndex: 0, analysis: analysisOf(image, 0, 2) }]);
    const value = (table: ReturnType<typeof boxTable>, measure: string) =>
      table.rows.find((row) => String(row[0]).startsWith(measure))?.[1];
    expect(value(onLeaf, "boxes at least half on the leaf")).toBe("100.0 %");
    expect(value(offLeaf, "boxes at least half on the leaf")).toBe("0.0 %");
    expect(value(onLeaf, "mean leaf share of the whole photo")).toBe("11.1 %");
  });
});
