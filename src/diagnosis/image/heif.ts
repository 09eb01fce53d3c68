import { uninitialisedBytes } from "../buffers.js";
import { ImageError } from "../diagnoser.js";
import {
  MAX_ASPECT_RATIO,
  MAX_INPUT_MEGAPIXELS,
  MAX_INPUT_PIXELS,
  THUMBNAIL_MIN_SHORT_SIDE,
} from "./limits.js";

export interface RgbaImage {
  /** 4 bytes per pixel, row-major, upright (the container's irot/imir applied by libheif). */
  data: Uint8Array;
  width: number;
  height: number;
  /** The primary image's upright size: the photo as taken, whichever of its images was decoded. */
  originalWidth: number;
  originalHeight: number;
  decoded: "primary" | "thumbnail";
}

interface Size {
  width: number;
  height: number;
}

// Values of libheif's heif_colorspace, heif_chroma and heif_channel enums (heif.h).
const COLORSPACE_RGB = 1;
const CHROMA_INTERLEAVED_RGBA = 11;
const CHANNEL_INTERLEAVED = 10;

type LibHeif = import("libheif-js/libheif-wasm/libheif-bundle.js").Libheif;
// The instance of the decode running now (decodeHeif sets it before the helpers below use it).
let libheif!: LibHeif;
let loading: Promise<LibHeif> | undefined;

/**
 * What libheif's C code printed during the decode in progress. Left to itself it writes to console.error (libde265's
 * "SPS error: ..." for a damaged HEVC stream), raw lines in a service whose logs are JSON lines; kept here, they
 * become part of the error's cause, which the request's log line carries. A decode runs without an await, so the
 * lines are the current decode's. A decode that succeeds drops them: its picture is the answer.
 */
const printed: string[] = [];
const MAX_PRINTED_LINES = 5;

function keepPrinted(line: string): void {
  if (printed.length < MAX_PRINTED_LINES) printed.push(line);
}

/** Instances a decode trapped in: never used again. */
const trappedInstances = new WeakSet<LibHeif>();

/**
 * libheif is loaded by the first HEIC a thread decodes, not when this module is imported: its WebAssembly
 * instance holds about 27 MB, and the main thread and the inference threads import this module without
 * ever decoding a HEIC (the server sends them to a thread of their own).
 */
function loadLibheif(): Promise<LibHeif> {
  loading ??= import("libheif-js/libheif-wasm/libheif-bundle.js").then(({ default: createLibheif }) =>
    createLibheif({ print: keepPrinted, printErr: keepPrinted }),
  );
  return loading;
}

/**
 * Decodes a HEIC/HEIF photo to RGBA with libheif compiled to WebAssembly (libheif-js), because sharp's prebuilt
 * libvips has no HEVC decoder. WebAssembly runs on the calling thread: call this from a pool worker.
 *
 * Phones store a small HEVC thumbnail beside the 12 MP primary image (an iPhone's is 320×240). When one is big
 * enough for the analysis (see THUMBNAIL_MIN_SHORT_SIDE) it is decoded instead: the same answer for about 1 % of
 * the HEVC work (tens of milliseconds instead of about 2 s in WebAssembly). The pixel limit is still checked on the
 * primary image, and `originalWidth`/`originalHeight` stay the primary's.
 *
 * Phones write the rotation of a photo taken upright (`irot`) on the primary image only and store the thumbnail
 * as the sensor saw it (libheif issue 548: "any iPhone image that is of vertical orientation"). A thumbnail with
 * no transformation of its own is therefore turned as the primary image is, when rotations are all the primary
 * has; with a mirror or crop on the primary, only a thumbnail with transformations of its own is used.
 */
export async function decodeHeif(bytes: Uint8Array): Promise<RgbaImage> {
  let lib = await loadLibheif();
  // A decode that was waiting for the instance another one trapped in loads a new one. From here on nothing is
  // awaited, so no other decode can run (and trap) in between.
  while (trappedInstances.has(lib)) lib = await loadLibheif();
  libheif = lib;
  printed.length = 0;
  const heap = heapScope();
  let trapped = false;
  try {
    const input = heap.alloc(bytes.length);
    libheif.HEAPU8.set(bytes, input);
    const context = libheif._heif_context_alloc();
    heap.onClose(() => libheif._heif_context_free(context));
    // Without copy: `input` outlives the context, since scope cleanups run last-in first-out.
    heap.check(
      (error) => libheif._heif_context_read_from_memory_without_copy(error, context, input, bytes.length, 0),
      "the HEIC/HEIF file could not be read: it is truncated or corrupt",
    );
    const primary = heap.own(
      heap.pointer(
        (error, out) => libheif._heif_context_get_primary_image_handle(error, context, out),
        "the HEIC/HEIF file could not be read: it is truncated or corrupt",
      ),
      libheif._heif_image_handle_release,
    );
    const original = handleSize(primary);
    // Header dimensions are known before any pixel is decoded: refuse pixel bombs here.
    if (original.width * original.height > MAX_INPUT_PIXELS) {
      throw new ImageError(tooManyPixelsMessage(original.width, original.height), "too_many_pixels");
    }
    checkAspectRatio(original.width, original.height);
    const thumbnail = usableThumbnail(heap, context, primary, original);
    const image = heap.own(
      heap.pointer(
        (error, out) =>
          libheif._heif_decode_image(
            error,
            thumbnail?.handle ?? primary,
            out,
            COLORSPACE_RGB,
            CHROMA_INTERLEAVED_RGBA,
            0,
          ),
        "the HEIC/HEIF image could not be decoded: it is truncated or corrupt",
      ),
      libheif._heif_image_release,
    );
    const pixels = copyPixels(heap, image);
    return {
      ...(thumbnail?.turn ? rotateRgba(pixels, thumbnail.turn) : pixels),
      originalWidth: original.width,
      originalHeight: original.height,
      decoded: thumbnail === null ? "primary" : "thumbnail",
    };
  } catch (error) {
    // WebAssembly.RuntimeError: a trap (an out-of-bounds access or an abort inside the C code). It leaves the
    // instance's heap in an unknown state: nothing more is called on it, and the next HEIC gets a new instance.
    // The file is what made it trap. Anything else (an ImageError, a JavaScript error) is not the file's fault.
    if (!(error instanceof Error && error.name === "RuntimeError")) throw error;
    trapped = true;
    trappedInstances.add(libheif);
    loading = undefined;
    throw new ImageError("the HEIC/HEIF image could not be decoded: it is truncated or corrupt", "corrupt", {
      cause: new Error(withPrinted(`libheif trapped: ${asError(error).message}`)),
    });
  } finally {
    if (!trapped) heap.close();
  }
}

function withPrinted(message: string): string {
  return printed.length === 0 ? message : `${message}; the decoder printed: ${printed.join(" | ")}`;
}

/**
 * The thumbnail to decode instead of the primary image, with the quarter turns (anticlockwise, degrees) to give
 * it after decoding, or null when none will do.
 */
function usableThumbnail(
  heap: HeapScope,
  context: number,
  primary: number,
  original: Size,
): { handle: number; turn: number } | null {
  const count = libheif._heif_image_handle_get_number_of_thumbnails(primary);
  if (count === 0) return null;
  const primaryTransforms = transformations(heap, context, primary);
  const ids = heap.alloc(4 * count);
  const listed = libheif._heif_image_handle_get_list_of_thumbnail_IDs(primary, ids, count);
  const thumbnails = Array.from({ length: listed }, (_, i) => {
    const id = libheif.HEAPU32[(ids >> 2) + i]!;
    const handle = heap.own(
      heap.pointer(
        (error, out) => libheif._heif_image_handle_get_thumbnail(error, primary, id, out),
        "the HEIC/HEIF file could not be read: it is truncated or corrupt",
      ),
      libheif._heif_image_handle_release,
    );
    const own = transformations(heap, context, handle).count > 0;
    const turn = own ? 0 : primaryTransforms.rotationCcw;
    const { width, height } = handleSize(handle);
    const shape = turn % 180 === 0 ? { width, height } : { width: height, height: width };
    // A mirror or crop on the primary image is not redone here: such a thumbnail would show another picture.
    return { handle, turn, ...shape, usable: own || primaryTransforms.onlyRotations };
  });
  return pickThumbnail(
    original,
    thumbnails.filter((t) => t.usable),
  );
}

// heif_item_property_type of a rotation: the fourcc 'irot'.
const PROPERTY_IROT = 0x69726f74;
const MAX_TRANSFORMATIONS = 8;

/** An image item's transformative properties (irot, imir, clap), which libheif applies when it decodes the item. */
function transformations(
  heap: HeapScope,
  context: number,
  handle: number,
): { count: number; onlyRotations: boolean; rotationCcw: number } {
  const item = libheif._heif_image_handle_get_item_id(handle);
  const ids = heap.alloc(4 * MAX_TRANSFORMATIONS);
  const count = libheif._heif_item_get_transformation_properties(context, item, ids, MAX_TRANSFORMATIONS);
  let rotationCcw = 0;
  let onlyRotations = true;
  for (let i = 0; i < count; i++) {
    const property = libheif.HEAPU32[(ids >> 2) + i]!;
    if (libheif._heif_item_get_property_type(context, item, property) === PROPERTY_IROT) {
      rotationCcw =
        (rotationCcw + libheif._heif_item_get_property_transform_rotation_ccw(context, item, property)) % 360;
    } else {
      onlyRotations = false;
    }
  }
  return { count, onlyRotations, rotationCcw };
}

/** The image turned anticlockwise by `degrees` (a multiple of 90), as `irot` turns it. */
export function rotateRgba(
  image: { data: Uint8Array; width: number; height: number },
  degrees: number,
): { data: Uint8Array; width: number; height: number } {
  const { data, width: w, height: h } = image;
  const quarter = (((degrees / 90) % 4) + 4) % 4;
  if (quarter === 0) return image;
  const width = quarter === 2 ? w : h;
  const height = quarter === 2 ? h : w;
  const out = uninitialisedBytes(data.length);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      // Anticlockwise: the top-right corner comes to the top left.
      const [tx, ty] =
        quarter === 1 ? [y, w - 1 - x] : quarter === 2 ? [w - 1 - x, h - 1 - y] : [h - 1 - y, x];
      out.set(data.subarray((y * w + x) * 4, (y * w + x) * 4 + 4), (ty * width + tx) * 4);
    }
  }
  return { data: out, width, height };
}

/**
 * The smallest thumbnail with at least THUMBNAIL_MIN_SHORT_SIDE pixels on its shorter side that shows the primary
 * image as it stands: same shape within 5 % and smaller. A thumbnail whose orientation disagrees with the
 * primary's (a writer that rotated one and not the other) or that is cropped differently is never used.
 */
export function pickThumbnail<T extends Size>(original: Size, thumbnails: readonly T[]): T | null {
  const aspect = original.width / original.height;
  const usable = thumbnails.filter(
    (t) =>
      Math.min(t.width, t.height) >= THUMBNAIL_MIN_SHORT_SIDE &&
      t.width * t.height < original.width * original.height &&
      Math.abs(t.width / t.height - aspect) <= 0.05 * aspect,
  );
  return usable.reduce<T | null>((best, t) => (best && best.width <= t.width ? best : t), null);
}

function handleSize(handle: number): Size {
  return {
    width: libheif._heif_image_handle_get_width(handle),
    height: libheif._heif_image_handle_get_height(handle),
  };
}

/** Copies an interleaved plane out of the WebAssembly heap, dropping the row padding libheif may add. */
function copyPixels(heap: HeapScope, image: number): { data: Uint8Array; width: number; height: number } {
  const width = libheif._heif_image_get_width(image, CHANNEL_INTERLEAVED);
  const height = libheif._heif_image_get_height(image, CHANNEL_INTERLEAVED);
  const strideAt = heap.alloc(4);
  const plane = libheif._heif_image_get_plane_readonly(image, CHANNEL_INTERLEAVED, strideAt);
  const stride = libheif.HEAP32[strideAt >> 2]!;
  const row = width * 4;
  const data = uninitialisedBytes(row * height);
  for (let y = 0; y < height; y++) {
    data.set(libheif.HEAPU8.subarray(plane + y * stride, plane + y * stride + row), y * row);
  }
  return { data, width, height };
}

interface HeapScope {
  alloc(size: number): number;
  own(pointer: number, release: (pointer: number) => void): number;
  onClose(cleanup: () => void): void;
  /** Calls a libheif function that reports a heif_error; throws an ImageError with `message` if it failed. */
  check(call: (error: number) => void, message: string): void;
  /** Like `check`, for a function that writes a pointer to its `out` argument: returns that pointer. */
  pointer(call: (error: number, out: number) => void, message: string): number;
  close(): void;
}

/** Everything allocated on the WebAssembly heap for one decode, released together, in reverse order. */
function heapScope(): HeapScope {
  const error = libheif._malloc(12);
  const out = libheif._malloc(4);
  const cleanups: Array<() => void> = [() => libheif._free(error), () => libheif._free(out)];
  const scope: HeapScope = {
    alloc(size) {
      return scope.own(libheif._malloc(Math.max(size, 1)), libheif._free);
    },
    own(pointer, release) {
      cleanups.push(() => release(pointer));
      return pointer;
    },
    onClose(cleanup) {
      cleanups.push(cleanup);
    },
    check(call, message) {
      call(error);
      const code = libheif.HEAP32[error >> 2];
      if (code !== 0) {
        const reason = cString(libheif.HEAPU32[(error >> 2) + 2]!);
        throw new ImageError(message, "corrupt", { cause: new Error(withPrinted(`libheif: ${reason}`)) });
      }
    },
    pointer(call, message) {
      scope.check((e) => call(e, out), message);
      return libheif.HEAPU32[out >> 2]!;
    },
    close() {
      for (const cleanup of cleanups.reverse()) cleanup();
      cleanups.length = 0;
    },
  };
  return scope;
}

function cString(pointer: number): string {
  if (pointer === 0) return "no reason given";
  const end = libheif.HEAPU8.indexOf(0, pointer);
  return new TextDecoder().decode(libheif.HEAPU8.subarray(pointer, end < 0 ? pointer : end));
}

/** Refuses a strip too elongated to be a photo, from its header's size: before any pixel is decoded. */
export function checkAspectRatio(width: number, height: number): void {
  if (Math.max(width, height) > MAX_ASPECT_RATIO * Math.min(width, height)) {
    throw new ImageError(
      `the image is ${width}×${height} pixels, more elongated than ${MAX_ASPECT_RATIO}:1; send a photo of the plant`,
      "unsupported_format",
    );
  }
}

export function tooManyPixelsMessage(width: number, height: number): string {
  return `the image is ${width}×${height} pixels; at most ${MAX_INPUT_MEGAPIXELS} megapixels are accepted`;
}

/** The decoder's own complaint, kept as the ImageError's cause (for the log, never for the client). */
export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
