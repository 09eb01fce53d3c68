import { uninitialisedBytes, uninitialisedFloats } from "../buffers.js";
import { resizeRgb } from "./resample.js";

/** The `input` block of classes.json: how training turned a photo into a tensor. */
export interface InputSpec {
  size: number;
  mean: [number, number, number];
  std: [number, number, number];
}

export interface RgbImage {
  data: Uint8Array;
  width: number;
  height: number;
}

/** Python 3's round(): halves go to the even neighbour. The training's resize rule rounds with it. */
function pyRound(x: number): number {
  const floor = Math.floor(x);
  const diff = x - floor;
  if (diff > 0.5) return floor + 1;
  if (diff < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

/** The training's resize rule (models/training/common.py `resize_short`): shorter side to `size`, longer rounded. */
export function resizedSize(width: number, height: number, size: number): { width: number; height: number } {
  if (width <= height) return { width: size, height: Math.max(size, pyRound((height * size) / width)) };
  return { width: Math.max(size, pyRound((width * size) / height)), height: size };
}

/** The photo shrunk (or enlarged) so its shorter side is `size`, by the training's resize rule. */
export function resizeTo(image: RgbImage, size: number): RgbImage {
  const target = resizedSize(image.width, image.height, size);
  if (target.width === image.width && target.height === image.height) return image;
  const data = resizeRgb(image.data, image.width, image.height, target.width, target.height);
  return { data, ...target };
}

/** A square cut out of an image: `left`, `top`, `side` in its pixels. */
export interface Square {
  left: number;
  top: number;
  side: number;
}

/** Copies a square out of a packed RGB image. */
export function cut(image: RgbImage, square: Square): RgbImage {
  const { left, top, side } = square;
  if (left === 0 && top === 0 && side === image.width && side === image.height) return image;
  const data = uninitialisedBytes(side * side * 3);
  const row = side * 3;
  for (let y = 0; y < side; y++) {
    const from = ((top + y) * image.width + left) * 3;
    data.set(image.data.subarray(from, from + row), y * row);
  }
  return { data, width: side, height: side };
}

/**
 * The centre `size` × `size` square of an image at least that large: the odd leftover pixel goes left/top
 * (ceil offsets, sharp's centre gravity, common.py `center_crop`).
 */
export function centreSquare(width: number, height: number, size: number): Square {
  return { left: Math.ceil((width - size) / 2), top: Math.ceil((height - size) / 2), side: size };
}

/** A centre view: the photo resized so its shorter side is `size`, centre-cropped to `size` × `size`. */
export interface CentreView {
  image: RgbImage;
  /** The resized photo's size and where the square sits in it, to map boxes back onto the whole photo. */
  resized: { width: number; height: number };
  square: Square;
}

export function centreView(image: RgbImage, size: number): CentreView {
  const resized = resizedSize(image.width, image.height, size);
  const square = centreSquare(resized.width, resized.height, size);
  // Only the square is resized: the same pixels as resizing the whole photo and cutting them out.
  const data =
    resized.width === image.width && resized.height === image.height
      ? cut(image, square).data
      : resizeRgb(image.data, image.width, image.height, resized.width, resized.height, {
          left: square.left,
          top: square.top,
          width: size,
          height: size,
        });
  return { image: { data, width: size, height: size }, resized, square };
}

/**
 * Square RGB images of the model's input size → one float32 NCHW batch: /255, (x - mean) / std, as training did
 * (common.py `to_input`). One lookup table per channel: 256 values instead of a division per sample.
 */
export function toBatch(images: RgbImage[], spec: InputSpec): Float32Array<ArrayBuffer> {
  const { size } = spec;
  const plane = size * size;
  const tables = [0, 1, 2].map((c) =>
    Float32Array.from({ length: 256 }, (_, v) => (v / 255 - spec.mean[c]!) / spec.std[c]!),
  );
  const [r, g, b] = tables as [Float32Array, Float32Array, Float32Array];
  const batch = uninitialisedFloats(images.length * 3 * plane);
  images.forEach((image, n) => {
    if (image.width !== size || image.height !== size)
      throw new Error(`a view is ${image.width}×${image.height}, the model takes ${size}×${size}`);
    const base = n * 3 * plane;
    const { data } = image;
    for (let i = 0; i < plane; i++) {
      batch[base + i] = r[data[i * 3]!]!;
      batch[base + plane + i] = g[data[i * 3 + 1]!]!;
      batch[base + 2 * plane + i] = b[data[i * 3 + 2]!]!;
    }
  });
  return batch;
}
