import sharp from "sharp";
import { ImageError } from "../diagnoser.js";
import { asError, checkAspectRatio, decodeHeif, type RgbaImage, tooManyPixelsMessage } from "./heif.js";
import { MAX_IMAGE_BYTES, MAX_INPUT_PIXELS, SHRINK_FROM_SHORT_SIDE, WORKING_SHORT_SIDE } from "./limits.js";
import { type ImageFormat, sniffFormat } from "./sniff.js";

/** A decoded photo: upright (EXIF/HEIF orientation applied), sRGB, 3 bytes per pixel, row-major. */
export interface DecodedImage {
  data: Buffer;
  width: number;
  height: number;
  /** The upright photo's size as uploaded; `width`/`height` are smaller when it was shrunk to working size. */
  originalWidth: number;
  originalHeight: number;
  format: ImageFormat;
}

/** Runs the HEIF decoder somewhere off the event loop (the inference pool); `decodeHeif` inline by default. */
export type HeifDecoder = (bytes: Uint8Array) => Promise<RgbaImage>;

// Orientations 5-8 rotate by 90°, swapping width and height.
const TRANSPOSING_ORIENTATIONS = new Set([5, 6, 7, 8]);

export async function decodeImage(
  bytes: Buffer,
  heifDecoder: HeifDecoder = decodeHeif,
): Promise<DecodedImage> {
  if (bytes.length === 0) throw new ImageError("the image is empty", "empty");
  if (bytes.length > MAX_IMAGE_BYTES) {
    throw new ImageError(
      `the image is ${(bytes.length / 1048576).toFixed(1)} MB; at most 10 MB are accepted`,
      "too_large",
    );
  }
  const format = sniffFormat(bytes);
  if (format === null) {
    throw new ImageError("the image is not a JPEG, PNG, WebP, HEIC or HEIF file", "unsupported_format");
  }
  return format === "heif" ? decodeHeifImage(bytes, heifDecoder) : decodeWithSharp(bytes, format);
}

async function decodeWithSharp(bytes: Buffer, format: ImageFormat): Promise<DecodedImage> {
  // The header alone gives the dimensions: a pixel bomb is refused before a single pixel is decoded. The limit
  // is off for this header read only, so that a bomb is reported as one and not as a corrupt file.
  const meta = await sharp(bytes, { limitInputPixels: false })
    .metadata()
    .catch((error: unknown) => {
      throw new ImageError(`the ${format.toUpperCase()} file could not be read: it is corrupt`, "corrupt", {
        cause: asError(error),
      });
    });
  const { width, height } = meta;
  if (!width || !height)
    throw new ImageError(`the ${format.toUpperCase()} file has no dimensions`, "corrupt");
  if (width * height > MAX_INPUT_PIXELS)
    throw new ImageError(tooManyPixelsMessage(width, height), "too_many_pixels");
  checkAspectRatio(width, height);
  const transposed = TRANSPOSING_ORIENTATIONS.has(meta.orientation ?? 1);
  const originalWidth = transposed ? height : width;
  const originalHeight = transposed ? width : height;

  // failOn "truncated": reject cut-off uploads, but accept the minor encoder warnings many phones produce.
  const pipeline = sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS, failOn: "truncated" }).rotate();
  const target = workingSize(originalWidth, originalHeight);
  if (target) pipeline.resize(target.width, target.height, { fit: "fill" });
  try {
    const { data, info } = await pipeline
      .flatten({ background: "#ffffff" })
      .toColourspace("srgb")
      .raw({ depth: "uchar" })
      .toBuffer({ resolveWithObject: true });
    return {
      data: toRgb(data, info.channels),
      width: info.width,
      height: info.height,
      originalWidth,
      originalHeight,
      format,
    };
  } catch (error) {
    throw new ImageError(`the ${format.toUpperCase()} image is truncated or corrupt`, "corrupt", {
      cause: asError(error),
    });
  }
}

async function decodeHeifImage(bytes: Buffer, heifDecoder: HeifDecoder): Promise<DecodedImage> {
  const rgba = await heifDecoder(bytes);
  const target = workingSize(rgba.width, rgba.height);
  const pipeline = sharp(rgba.data, { raw: { width: rgba.width, height: rgba.height, channels: 4 } });
  if (target) pipeline.resize(target.width, target.height, { fit: "fill" });
  const { data, info } = await pipeline
    .flatten({ background: "#ffffff" })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return {
    data: toRgb(data, info.channels),
    width: info.width,
    height: info.height,
    originalWidth: rgba.originalWidth,
    originalHeight: rgba.originalHeight,
    format: "heif",
  };
}

/** The size to shrink to, keeping the aspect ratio, or null when the photo is decoded whole. */
function workingSize(width: number, height: number): { width: number; height: number } | null {
  const shorter = Math.min(width, height);
  if (shorter < SHRINK_FROM_SHORT_SIDE) return null;
  const scale = WORKING_SHORT_SIDE / shorter;
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

// sharp keeps an alpha band on some inputs even after flatten (e.g. grey+alpha PNG → sRGB): drop extras.
function toRgb(data: Buffer, channels: number): Buffer {
  if (channels === 3) return data;
  const pixels = data.length / channels;
  const rgb = Buffer.allocUnsafe(pixels * 3);
  for (let i = 0; i < pixels; i++) {
    const grey = channels < 3;
    rgb[i * 3] = data[i * channels]!;
    rgb[i * 3 + 1] = data[i * channels + (grey ? 0 : 1)]!;
    rgb[i * 3 + 2] = data[i * channels + (grey ? 0 : 2)]!;
  }
  return rgb;
}
