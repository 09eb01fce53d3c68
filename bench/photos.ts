/**
 * The photos the benches send: a 12-megapixel phone-like JPEG, and the same photo as a real HEIC (encoded by
 * Debian's heif-enc, as the tests do).
 */
import sharp from "sharp";

export { heic as toHeic } from "../test/api/support/images.js";

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
