import { describe, expect, it } from "vitest";
import { toPhoto } from "../../src/diagnosis/detections.js";
import type { Leaf } from "../../src/diagnosis/model/leaves.js";
import { centreView, cut, type RgbImage, resizeTo, toBatch } from "../../src/diagnosis/model/preprocess.js";
import {
  cropWindow,
  leafCrop,
  splitLeaves,
  windowPixels,
  workingImage,
  zoomWindow,
} from "../../src/diagnosis/model/views.js";

const VIEWS = {
  working_size: 256,
  leaf_crops: 2,
  margin: 1.3,
  max_area: 0.5,
  min_side: 0.2,
  zoom: 0,
  zoom_below: 1,
};

function leaf(cx: number, cy: number, w: number, h: number, heat = 0.9): Leaf {
  return { x: cx - w / 2, y: cy - h / 2, w, h, heat };
}

/** An image filled by `colour(x, y)`. */
function image(width: number, height: number, colour: (x: number, y: number) => number[]): RgbImage {
  const data = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) data.set(colour(x, y), (y * width + x) * 3);
  return { data, width, height };
}

const pixel = (img: RgbImage, x: number, y: number) =>
  Array.from(img.data.subarray((y * img.width + x) * 3, (y * img.width + x) * 3 + 3));

describe("leaf crop windows", () => {
  const leaves = [
    leaf(0.5, 0.5, 0.9, 0.9),
    leaf(0.3, 0.3, 0.2, 0.3),
    leaf(0.7, 0.7, 0.1, 0.1),
    leaf(0.1, 0.8, 0.1, 0.1),
  ];

  it("crops the strongest leaves that do not already fill the view: at most leaf_crops for the answer", () => {
    expect(splitLeaves(leaves, VIEWS)).toEqual({
      answer: [leaves[1], leaves[2]],
      others: [leaves[3]],
      whole: [leaves[0]],
    });
    expect(splitLeaves(leaves, { ...VIEWS, max_area: 0.81 })).toEqual({
      answer: [leaves[0], leaves[1]],
      others: [leaves[2], leaves[3]],
      whole: [],
    });
    expect(splitLeaves(leaves, { ...VIEWS, leaf_crops: 0 })).toEqual({
      answer: [],
      others: [leaves[1], leaves[2], leaves[3]],
      whole: [leaves[0]],
    });
  });

  it("adds the closer view of the middle only for an unsure centre view with a leaf found and a crop slot free", () => {
    const zoomed = { ...VIEWS, zoom: 0.6, zoom_below: 0.8 };
    const middle = { x: 0.2, y: 0.2, side: 0.6 };
    const filling = [leaves[0]!]; // found, too big to crop
    expect(zoomWindow(filling, [], 0.5, zoomed)).toEqual(middle);
    expect(zoomWindow(leaves, [leaves[1]!], 0.5, zoomed)).toEqual(middle);
    expect(zoomWindow(filling, [], 0.8, zoomed)).toBeNull(); // the centre view is sure enough
    expect(zoomWindow(leaves, [leaves[1]!, leaves[2]!], 0.5, zoomed)).toBeNull();
    expect(zoomWindow([], [], 0.5, zoomed)).toBeNull(); // no leaf to look closer at
    expect(zoomWindow(filling, [], 0.5, VIEWS)).toBeNull(); // a model without a closer view
    // The middle 154 px of the 256 px working image, as the Python twin cuts it (views.py `cut`).
    expect(windowPixels(middle, 256)).toEqual({ left: 51, top: 51, side: 154 });
  });

  it("is the leaf's longer side with the margin, centred on the leaf", () => {
    const window = cropWindow(leaf(0.5, 0.4, 0.2, 0.3), VIEWS);
    expect(window.side).toBeCloseTo(0.39, 12);
    expect(window.x).toBeCloseTo(0.5 - 0.195, 12);
    expect(window.y).toBeCloseTo(0.4 - 0.195, 12);
  });

  it("is never smaller than min_side nor larger than the view", () => {
    expect(cropWindow(leaf(0.5, 0.5, 0.05, 0.02), VIEWS).side).toBe(0.2);
    expect(cropWindow(leaf(0.5, 0.5, 0.6, 0.9), VIEWS)).toEqual({ x: 0, y: 0, side: 1 });
  });

  it("is shifted, not shrunk, to lie inside the view", () => {
    const corner = cropWindow(leaf(0.95, 0.02, 0.3, 0.1), VIEWS);
    expect(corner.side).toBeCloseTo(0.39, 12);
    expect(corner.x).toBeCloseTo(1 - 0.39, 12);
    expect(corner.y).toBe(0);
  });

  it("rounds to pixels and stays inside the image", () => {
    expect(windowPixels({ x: 0.305, y: 0.205, side: 0.39 }, 256)).toEqual({ left: 78, top: 52, side: 100 });
    // 0.7 × 5 = 3.5 rounds to 4 and 0.3 × 5 = 1.5 to 2: 4 + 2 would pass the edge, so the window moves left.
    expect(windowPixels({ x: 0.7, y: 0.7, side: 0.3 }, 5)).toEqual({ left: 3, top: 3, side: 2 });
    expect(windowPixels({ x: 0, y: 0, side: 1 }, 256)).toEqual({ left: 0, top: 0, side: 256 });
  });
});

describe("views of a photo", () => {
  // A 4:3 landscape photo, red left of x = 200, blue from there; green rows from y = 225 (the lower quarter).
  const photo = image(400, 300, (x, y) => (y >= 225 ? [0, 255, 0] : x < 200 ? [255, 0, 0] : [0, 0, 255]));

  it("the working image and the centre view show the same square of the photo", () => {
    const working = workingImage(photo, VIEWS);
    const centre = centreView(photo, 64);
    expect([working.width, working.height]).toEqual([256, 256]);
    expect([centre.image.width, centre.image.height]).toEqual([64, 64]);
    // The photo's middle column and its green quarter fall at the same fractions of both views.
    for (const [view, size] of [
      [working, 256],
      [centre.image, 64],
    ] as const) {
      const red = Array.from({ length: size }, (_, x) => pixel(view, x, 0)[0]! > 128).lastIndexOf(true) + 1;
      const green = Array.from({ length: size }, (_, y) => pixel(view, 0, y)[1]! > 128).indexOf(true);
      expect(red / size).toBeCloseTo(0.5, 1);
      expect(green / size).toBeCloseTo(0.75, 1);
    }
  });

  it("resizes only the centre square, to the same bytes as resizing the whole photo and cutting it out", () => {
    let seed = 11;
    const noise = () => {
      seed = (seed * 48271) % 2147483647;
      return seed % 256;
    };
    for (const [width, height, size] of [
      [341, 256, 224],
      [256, 341, 96],
      [97, 61, 128],
      [300, 300, 64],
      [224, 160, 160],
    ] as const) {
      const photo = image(width, height, () => [noise(), noise(), noise()]);
      const view = centreView(photo, size);
      const whole = resizeTo(photo, size);
      expect(view.image.data, `${width}×${height} → ${size}`).toEqual(cut(whole, view.square).data);
    }
  });

  it("cuts a leaf's window out of the working image and resizes it to the model's input", () => {
    // A working image with a white square at [128, 192) on both axes.
    const working = image(256, 256, (x, y) =>
      x >= 128 && x < 192 && y >= 128 && y < 192 ? [255, 255, 255] : [0, 0, 0],
    );
    const crop = leafCrop(working, { x: 0.5, y: 0.5, side: 0.25 }, 48);
    expect([crop.width, crop.height]).toEqual([48, 48]);
    expect(crop.data.every((v) => v === 255)).toBe(true);
    const half = leafCrop(working, { x: 0.375, y: 0.5, side: 0.25 }, 48);
    expect(pixel(half, 0, 24)).toEqual([0, 0, 0]);
    expect(pixel(half, 47, 24)).toEqual([255, 255, 255]);
  });

  it("maps a box of the centre view back to fractions of the whole photo", () => {
    // A portrait photo: resized to 64 × 85, the centre view is rows 11-74.
    const portrait = centreView(
      image(300, 400, () => [0, 0, 0]),
      64,
    );
    expect(portrait.resized).toEqual({ width: 64, height: 85 });
    expect(portrait.square).toEqual({ left: 0, top: 11, side: 64 });
    const whole = toPhoto(leaf(0.5, 0.5, 1, 1), portrait);
    expect(whole).toEqual([0, 0.129, 1, 0.753]);
    const corner = toPhoto(leaf(0.875, 0.125, 0.25, 0.25), portrait);
    expect(corner[0]).toBeCloseTo(0.75, 3);
    expect(corner[1]).toBeCloseTo(11 / 85, 3);
    expect(corner[2]).toBeCloseTo(0.25, 3);
    expect(corner[3]).toBeCloseTo(16 / 85, 3);
  });

  it("normalises a batch channel by channel, image after image (NCHW)", () => {
    const spec = {
      size: 2,
      mean: [0.5, 0.25, 0] as [number, number, number],
      std: [0.5, 0.25, 1] as [number, number, number],
    };
    const white = image(2, 2, () => [255, 255, 255]);
    const black = image(2, 2, () => [0, 0, 0]);
    const batch = toBatch([white, black], spec);
    expect(batch).toHaveLength(2 * 3 * 4);
    expect(Array.from(batch.subarray(0, 12))).toEqual([1, 1, 1, 1, 3, 3, 3, 3, 1, 1, 1, 1]);
    expect(Array.from(batch.subarray(12))).toEqual([-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0]);
    expect(() => toBatch([image(3, 2, () => [0, 0, 0])], spec)).toThrow(/3×2/);
  });
});
