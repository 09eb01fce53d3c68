import type { Leaf } from "./leaves.js";
import type { ViewSettings } from "./metadata.js";
import { centreView, cut, type RgbImage, resizeTo, type Square } from "./preprocess.js";

/** A crop window in fractions of the centre view (and so of the working image): a square. */
export interface Window {
  x: number;
  y: number;
  side: number;
}

/**
 * Where each leaf found is read (CONTRACT steps 4 and 7), strongest first. A leaf filling more than `max_area` of the
 * centre view is read by the centre view itself (`whole`). The others are cropped: the first `leaf_crops` for the
 * answer, the rest for their boxes alone, never for the answer.
 */
export function splitLeaves(
  leaves: Leaf[],
  views: ViewSettings,
): { answer: Leaf[]; others: Leaf[]; whole: Leaf[] } {
  const croppable = leaves.filter((leaf) => leaf.w * leaf.h <= views.max_area);
  return {
    answer: croppable.slice(0, views.leaf_crops),
    others: croppable.slice(views.leaf_crops),
    whole: leaves.filter((leaf) => leaf.w * leaf.h > views.max_area),
  };
}

/**
 * The closer view of the centre view's middle (CONTRACT step 4), read when a leaf was found but the leaf crops
 * leave a slot free (most often, leaves that fill the view) and the centre view is unsure of the leaf's class
 * (`centreTop`, its likeliest leaf class's probability at temperature 1, under `views.zoom_below`): null when no
 * leaf was found (nothing to look closer at), when the crops fill every slot, when the centre view is sure
 * already, or when the model has no closer view (`views.zoom` 0).
 */
export function zoomWindow(
  leaves: Leaf[],
  answer: Leaf[],
  centreTop: number,
  views: ViewSettings,
): Window | null {
  if (views.zoom <= 0 || leaves.length === 0 || answer.length >= views.leaf_crops) return null;
  if (centreTop >= views.zoom_below) return null;
  const start = (1 - views.zoom) / 2;
  return { x: start, y: start, side: views.zoom };
}

/** Where `start` must move for a span of `length` to lie inside [0, 1] (shifted, never shrunk). */
const shiftInside = (start: number, length: number) => Math.min(Math.max(start, 0), 1 - length);

/**
 * The square around one leaf: its box's longer side with a margin, never under `min_side` nor over the whole
 * view, centred on the box and shifted to lie inside the view.
 */
export function cropWindow(leaf: Leaf, views: ViewSettings): Window {
  const side = Math.min(1, Math.max(views.min_side, Math.max(leaf.w, leaf.h) * views.margin));
  return {
    x: shiftInside(leaf.x + leaf.w / 2 - side / 2, side),
    y: shiftInside(leaf.y + leaf.h / 2 - side / 2, side),
    side,
  };
}

/** A window in pixels of a `size` × `size` image, still inside it after rounding. */
export function windowPixels(window: Window, size: number): Square {
  const side = Math.min(size, Math.max(1, Math.round(window.side * size)));
  const place = (start: number) => Math.min(Math.max(Math.round(start * size), 0), size - side);
  return { left: place(window.x), top: place(window.y), side };
}

/** The working image: the centre view's field of view at `working_size` px (CONTRACT step 3). */
export function workingImage(photo: RgbImage, views: ViewSettings): RgbImage {
  return centreView(photo, views.working_size).image;
}

/** One leaf's crop, cut from the working image and resized to the model's input size with the training's filter. */
export function leafCrop(working: RgbImage, window: Window, size: number): RgbImage {
  const square = cut(working, windowPixels(window, working.width));
  return resizeTo(square, size);
}
