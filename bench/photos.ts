/**
 * The photos the benches send: a 12-megapixel phone-like JPEG, and the same photo as a real HEIC (encoded by
 * Debian's heif-enc, as the tests do), once with the 320×240 thumbnail a phone stores and once without one.
 */
import sharp from "sharp";
import { heic } from "../test/api/support/images.js";

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

/** A leafy 4000×3000 scene with sensor-like noise, so the JPEG is as heavy to decode as a phone photo. */
export async function phonePhoto(width: number, height: number): Promise<Buffer> {
  const leaves = Array.from({ length: 40 }, (_, i) => {
    const cx = (i * 977) % width;
    const cy = (i * 613) % height;
    return `<ellipse cx="${cx}" cy="${cy}" rx="${width / 9}" ry="${height / 14}" transform="rotate(${(i * 37) % 180} ${cx} ${cy})" fill="hsl(${80 + (i % 5) * 10}, 55%, ${28 + (i % 4) * 6}%)"/>`;
  }).join("");
  const scene = await sharp(
    Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#6d5a3e"/>${leaves}</svg>`,
    ),
  )
    .raw()
    .toBuffer({ resolveWithObject: true });
  const noise = await sharp({
    create: {
      width,
      height,
      channels: 3,
      background: "#000",
      noise: { type: "gaussian", mean: 128, sigma: 12 },
    },
  })
    .raw()
    .toBuffer();
  const pixels = scene.data;
  const channels = scene.info.channels;
  const noisy = Buffer.alloc(width * height * 3);
  for (let i = 0; i < width * height; i++) {
    for (let c = 0; c < 3; c++)
      noisy[i * 3 + c] = Math.max(0, Math.min(255, pixels[i * channels + c]! + noise[i * 3 + c]! - 128));
  }
  return sharp(noisy, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 90 })
    .toBuffer();
}
