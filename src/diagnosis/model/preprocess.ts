import type { DecodedImage } from "../image/decode.js";
import { resizeRgb } from "./resample.js";

/** The `input` block of classes.json: how training turned a photo into a tensor. */
export interface InputSpec {
  size: number;
  mean: [number, number, number];
  std: [number, number, number];
  /** How the centre crop rounds an odd leftover: `ceil` puts the extra pixel left/top (sharp's centre gravity). */
  cropRounding: "floor" | "ceil";
}

export interface RgbImage {
  data: Uint8Array;
  width: number;
  height: number;
}

export interface ModelView {
  /** float32 [3, size, size], normalized, ready to batch as NCHW. */
  tensor: Float32Array;
  /** The photo resized so its shorter side is `size`, before the centre crop. */
  resized: RgbImage;
  /** Where the crop sits in `resized`, to map activation maps back onto the whole photo. */
  crop: { left: number; top: number; size: number };
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

/** Resize shorter side → centre crop → /255 → (x - mean) / std, as training did (common.py `preprocess_uint8`, `to_input`). */
export function preprocess(image: DecodedImage, spec: InputSpec): ModelView {
  const resized = resizeTo(image, spec.size);
  const { size } = spec;
  const round = spec.cropRounding === "floor" ? Math.floor : Math.ceil;
  const left = round((resized.width - size) / 2);
  const top = round((resized.height - size) / 2);
  const plane = size * size;
  const tensor = new Float32Array(3 * plane);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const src = ((y + top) * resized.width + (x + left)) * 3;
      const dst = y * size + x;
      for (let c = 0; c < 3; c++) {
        tensor[c * plane + dst] = (resized.data[src + c]! / 255 - spec.mean[c]!) / spec.std[c]!;
      }
    }
  }
  return { tensor, resized, crop: { left, top, size } };
}

/** The photo shrunk (or enlarged) so its shorter side is `size`, by the training's resize rule. */
export function resizeTo(image: DecodedImage, size: number): RgbImage {
  const target = resizedSize(image.width, image.height, size);
  const data = resizeRgb(image.data, image.width, image.height, target.width, target.height);
  return { data, ...target };
}
