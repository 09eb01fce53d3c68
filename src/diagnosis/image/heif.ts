import decodeHeic from "heic-decode";
import { ImageError } from "../diagnoser.js";
import { MAX_INPUT_PIXELS } from "./limits.js";

export interface RgbaImage {
  data: Uint8Array;
  width: number;
  height: number;
}

/**
 * Decodes the primary image of a HEIC/HEIF file to RGBA. sharp's prebuilt libvips has no HEVC decoder, so this
 * uses libheif compiled to WebAssembly. WebAssembly runs on the calling thread: call it from a pool worker,
 * never from the event loop. libheif applies the container's rotation/mirror boxes itself, so the pixels come
 * out oriented.
 */
export async function decodeHeif(bytes: Uint8Array): Promise<RgbaImage> {
  let images: Awaited<ReturnType<typeof decodeHeic.all>>;
  try {
    images = await decodeHeic.all({ buffer: bytes });
  } catch (error) {
    throw new ImageError("the HEIC/HEIF file could not be read: it is truncated or corrupt", "corrupt", {
      cause: asError(error),
    });
  }
  try {
    const primary = images[0];
    if (!primary) throw new ImageError("the HEIC/HEIF file holds no image", "corrupt");
    // Header dimensions are known before any pixel is decoded: refuse pixel bombs here.
    if (primary.width * primary.height > MAX_INPUT_PIXELS) {
      throw new ImageError(tooManyPixelsMessage(primary.width, primary.height), "too_many_pixels");
    }
    const decoded = await primary.decode().catch((error: unknown) => {
      throw new ImageError(
        "the HEIC/HEIF image could not be decoded: it is truncated or corrupt",
        "corrupt",
        {
          cause: asError(error),
        },
      );
    });
    return {
      data: new Uint8Array(decoded.data.buffer, decoded.data.byteOffset, decoded.data.byteLength),
      width: decoded.width,
      height: decoded.height,
    };
  } finally {
    images.dispose();
  }
}

export function tooManyPixelsMessage(width: number, height: number): string {
  return `the image is ${width}×${height} pixels; at most ${MAX_INPUT_PIXELS / 1_000_000} megapixels are accepted`;
}

/** The decoder's own complaint, kept as the ImageError's cause (for the log, never for the client). */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
