/**
 * The photos the benches send: a 12-megapixel JPEG made from a real field photo, and the same photo as a real HEIC
 * (encoded by Debian's heif-enc, as the tests do), once with the 320×240 thumbnail a phone stores and once without.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { heic } from "../test/api/support/images.js";
import { DATASETS_DIR } from "../test/diagnosis/helpers.js";
import { seededRandom } from "../test/support/random.js";

export interface BenchPhotos {
  /** [row name, bytes, file name] */
  images: Array<[string, Buffer, string]>;
  /** Rows that could not be made, with the reason (e.g. no heif-enc to make the HEIC photos). */
  skipped: string[];
}

export async function benchPhotos(): Promise<BenchPhotos> {
  const jpeg = await phonePhoto(4000, 3000);
  const images: BenchPhotos["images"] = [["JPEG 4000×3000 (12 MP)", jpeg, "photo.jpg"]];
  const skipped: string[] = [];
  try {
    images.push(
      ["HEIC 4000×3000 (12 MP), 320×240 thumbnail", await heic(jpeg, { thumbnail: 320 }), "IMG_0001.HEIC"],
      ["HEIC 4000×3000 (12 MP), no thumbnail", await heic(jpeg), "photo.heic"],
    );
  } catch (error) {
    skipped.push(
      `HEIC: could not make one with heif-enc (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  return { images, skipped };
}

/**
 * A field photo of the train split (PlantDoc, CC BY 4.0): maize leaves with northern leaf blight in a field.
 * Farmers' photos show several leaves, so the service reads the centre view and then up to two leaf crops; a photo
 * without separate leaves would time a cheaper path than theirs. Chosen as the first by file name with at least
 * four leaf boxes, each under a quarter of the photo, that the model of 26 November read with two leaf crops and
 * took for a plant (it called the first such photo "not a plant"). The core bench prints the views read.
 */
export const BENCH_FIELD_PHOTO = "field-photos/maize__northern_leaf_blight/705e5356c7d04eb1.jpg";

/** Seeds the sensor noise, so every run (and the decode floor's own process) encodes the same bytes. */
const NOISE_SEED = 20261127;
const NOISE_SIGMA = 12;

/**
 * The field photo at `width` × `height` with sensor-like noise, so the JPEG is as heavy to decode as a phone photo.
 * The noise is seeded: libvips's own is not, and one draw in a few let the leaf finder see one more leaf, so the
 * `include_bbox` row read 5 or 6 views from run to run.
 */
export async function phonePhoto(width: number, height: number): Promise<Buffer> {
  const file = path.join(DATASETS_DIR, BENCH_FIELD_PHOTO);
  if (!existsSync(file))
    throw new Error(`the bench photo ${file} is missing: the benches need ../shared/datasets`);
  const scene = await sharp(file)
    .resize(width, height, { fit: "cover" })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const pixels = scene.data;
  const channels = scene.info.channels;
  const gaussian = gaussianNoise(seededRandom(NOISE_SEED), NOISE_SIGMA);
  const noisy = Buffer.alloc(width * height * 3);
  for (let i = 0; i < width * height; i++) {
    for (let c = 0; c < 3; c++)
      noisy[i * 3 + c] = Math.max(0, Math.min(255, Math.round(pixels[i * channels + c]! + gaussian())));
  }
  return sharp(noisy, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 90 })
    .toBuffer();
}

/** Normal deviates with standard deviation `sigma` from uniform ones (Box-Muller, both values of each pair used). */
function gaussianNoise(uniform: () => number, sigma: number): () => number {
  let spare: number | null = null;
  return () => {
    if (spare !== null) {
      const value = spare;
      spare = null;
      return value;
    }
    const radius = sigma * Math.sqrt(-2 * Math.log(1 - uniform()));
    const angle = 2 * Math.PI * uniform();
    spare = radius * Math.sin(angle);
    return radius * Math.cos(angle);
  };
}
