/**
 * Where the `include_bbox` boxes fall, measured without box annotations (../shared/datasets has none): on the
 * lab photos a leaf lies on a plain background, so a colour rule finds the leaf, and a box that marks a lesion
 * must lie on it. This checks that the boxes point at the leaf rather than the background; it cannot check
 * that they close on the lesion rather than on healthy tissue.
 */
import type { Analysis } from "../../src/diagnosis/analyse.js";
import { camBoxes } from "../../src/diagnosis/model/cam.js";
import type { RgbImage } from "../../src/diagnosis/model/preprocess.js";
import { pct, type Table } from "./report.js";

export interface BoxSample {
  label: string;
  classIndex: number;
  analysis: Analysis;
}

/**
 * The leaf of a plain-background photo: saturated and not black (`fg_mask` of models/training/train.py, without
 * its dilation). PlantVillage backgrounds are grey, black or white, none of them saturated.
 */
export function leafMask(image: RgbImage): Uint8Array {
  const mask = new Uint8Array(image.width * image.height);
  for (let i = 0; i < mask.length; i++) {
    const r = image.data[i * 3]!;
    const g = image.data[i * 3 + 1]!;
    const b = image.data[i * 3 + 2]!;
    const max = Math.max(r, g, b);
    const saturation = (max - Math.min(r, g, b)) / (max + 0.255);
    mask[i] = saturation > 0.2 && max > 0.12 * 255 ? 1 : 0;
  }
  return mask;
}

/** Share of mask pixels inside a normalized [x, y, w, h] box of an image of this size. */
function maskShare(mask: Uint8Array, width: number, height: number, bbox: number[]): number {
  const [x, y, w, h] = bbox as [number, number, number, number];
  const x0 = Math.round(x * width);
  const y0 = Math.round(y * height);
  const x1 = Math.max(x0 + 1, Math.round((x + w) * width));
  const y1 = Math.max(y0 + 1, Math.round((y + h) * height));
  let on = 0;
  for (let row = y0; row < y1; row++) for (let col = x0; col < x1; col++) on += mask[row * width + col]!;
  return on / ((x1 - x0) * (y1 - y0));
}

export function boxTable(samples: BoxSample[]): Table {
  let boxes = 0;
  let onLeaf = 0;
  let mostlyOnLeaf = 0;
  let boxArea = 0;
  let photoLeaf = 0;
  let withBoxes = 0;
  for (const { label, classIndex, analysis } of samples) {
    const model = analysis.model!;
    const { resized, crop } = model.view;
    const found = camBoxes(model.output.cam, model.output.camSize, classIndex, label, 1, { resized, crop });
    const mask = leafMask(resized);
    photoLeaf += maskShare(mask, resized.width, resized.height, [0, 0, 1, 1]);
    if (found.length > 0) withBoxes++;
    for (const { bbox } of found) {
      const share = maskShare(mask, resized.width, resized.height, bbox);
      boxes++;
      onLeaf += share;
      if (share >= 0.5) mostlyOnLeaf++;
      boxArea += bbox[2]! * bbox[3]!;
    }
  }
  const mean = (sum: number, n: number) => (n === 0 ? "–" : pct(sum, n));
  return {
    title:
      "Boxes (`include_bbox`) on lab photos of diseased leaves, correctly classified: on the leaf or on the background?",
    head: ["measure", "value"],
    rows: [
      ["photos / photos with at least one box", `${samples.length} / ${withBoxes}`],
      ["boxes, mean per photo", `${boxes}, ${(boxes / Math.max(1, samples.length)).toFixed(2)}`],
      ["mean box area (share of the photo)", mean(boxArea, boxes)],
      ["mean leaf share inside a box", mean(onLeaf, boxes)],
      ["mean leaf share of the whole photo (a box placed at random)", mean(photoLeaf, samples.length)],
      ["boxes at least half on the leaf", mean(mostlyOnLeaf, boxes)],
    ],
  };
}
