/**
 * The `include_bbox` detections against the PlantDoc leaf boxes of the field test photos: each detection is a
 * leaf the service says is affected, each PlantDoc box a leaf of a photo labelled with one disease. Matched
 * one-to-one at IoU ≥ 0.5, the PASCAL VOC rule: detections in order of confidence, each takes the unmatched leaf
 * box it overlaps most.
 */
import type { Detection } from "../../src/diagnosis/types.js";
import { pct, type Row, type Table } from "./report.js";

/** [x, y, width, height], fractions of the photo's width and height. */
export type Box = [number, number, number, number];

export const MATCH_IOU = 0.5;

export function iou(a: Box, b: Box): number {
  const w = Math.min(a[0] + a[2], b[0] + b[2]) - Math.max(a[0], b[0]);
  const h = Math.min(a[1] + a[3], b[1] + b[3]) - Math.max(a[1], b[1]);
  if (w <= 0 || h <= 0) return 0;
  const overlap = w * h;
  return overlap / (a[2] * a[3] + b[2] * b[3] - overlap);
}

/** How many detections find a leaf box of their own (detections ordered by confidence, ties by list order). */
export function matchCount(detections: { box: Box; confidence: number }[], truth: Box[]): number {
  const taken = new Array<boolean>(truth.length).fill(false);
  let matched = 0;
  const ordered = detections
    .map((d, i) => ({ ...d, i }))
    .sort((a, b) => b.confidence - a.confidence || a.i - b.i);
  for (const { box } of ordered) {
    let best = -1;
    let bestIou = MATCH_IOU;
    truth.forEach((t, j) => {
      const overlap = iou(box, t);
      if (!taken[j] && overlap >= bestIou) {
        best = j;
        bestIou = overlap;
      }
    });
    if (best !== -1) {
      taken[best] = true;
      matched++;
    }
  }
  return matched;
}

/** The manifest's `leaf_boxes` column: a JSON list of [x, y, w, h]. */
export function parseBoxes(text: string): Box[] {
  const boxes = JSON.parse(text) as unknown;
  if (!Array.isArray(boxes) || !boxes.every((b) => Array.isArray(b) && b.length === 4))
    throw new Error(`leaf_boxes is not a list of [x, y, w, h]: ${text}`);
  return boxes as Box[];
}

/**
 * The spec gives detection boxes as fractions of the photo. A service that answered in pixels would match nothing
 * here and look like a useless detector, so pixel boxes are converted and counted: the report says so.
 */
export function detectionBoxes(
  detections: Detection[],
  photo: { width: number; height: number },
): { boxes: { box: Box; confidence: number }[]; inPixels: boolean } {
  const inPixels = detections.some((d) => d.bbox.some((v) => v > 1));
  const scale: Box = inPixels ? [photo.width, photo.height, photo.width, photo.height] : [1, 1, 1, 1];
  return {
    inPixels,
    boxes: detections.map((d) => ({
      box: d.bbox.map((v, i) => v / scale[i]!) as Box,
      confidence: d.confidence,
    })),
  };
}

export interface BoxedPhoto {
  detections: Detection[];
  truth: Box[];
  width: number;
  height: number;
  /** The disease the result named first is the photo's label. */
  rightDisease: boolean;
}

interface Tally {
  photos: number;
  withBox: number;
  detections: number;
  leaves: number;
  matched: number;
}

function tally(photos: BoxedPhoto[]): Tally & { inPixels: number } {
  const t = { photos: photos.length, withBox: 0, detections: 0, leaves: 0, matched: 0, inPixels: 0 };
  for (const photo of photos) {
    const { boxes, inPixels } = detectionBoxes(photo.detections, photo);
    if (inPixels) t.inPixels++;
    if (boxes.length > 0) t.withBox++;
    t.detections += boxes.length;
    t.leaves += photo.truth.length;
    t.matched += matchCount(boxes, photo.truth);
  }
  return t;
}

function row(name: string, t: Tally): Row {
  return [
    name,
    t.photos,
    pct(t.withBox, t.photos),
    t.detections,
    t.leaves,
    pct(t.matched, t.detections),
    pct(t.matched, t.leaves),
  ];
}

/** Precision and recall over the photos where a disease was named (only those carry detections). */
export function boxTable(photos: BoxedPhoto[], context: string): Table {
  const all = tally(photos);
  const right = tally(photos.filter((p) => p.rightDisease));
  const notes =
    all.inPixels > 0
      ? ` Detections of ${all.inPixels} photos came in pixels, not the spec's fractions: converted.`
      : "";
  return {
    title: `Boxes: \`detections\` against the PlantDoc leaf boxes, IoU ≥ ${MATCH_IOU}, one-to-one (${context}).${notes}`,
    head: [
      "photos where a disease was named",
      "photos",
      "with at least one box",
      "detections",
      "leaf boxes",
      "precision",
      "recall",
    ],
    rows: [row("all", all), row("the right disease named", right)],
  };
}
