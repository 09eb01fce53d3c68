import { execFileSync } from "node:child_process";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { ImageError } from "../../src/diagnosis/diagnoser.js";
import { decodeImage } from "../../src/diagnosis/image/decode.js";
import { qualityIssue } from "../../src/diagnosis/image/quality.js";
import { sniffFormat } from "../../src/diagnosis/image/sniff.js";
import { measure } from "../../src/diagnosis/image/stats.js";
import { resizeTo } from "../../src/diagnosis/model/preprocess.js";
import { leafJpeg, pngBomb, toHeic } from "./fixtures.js";

function hasHeifEnc(): boolean {
  try {
    execFileSync("sh", ["-c", "command -v heif-enc"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
const HEIF_ENC = hasHeifEnc();
if (!HEIF_ENC)
  console.warn("HEIC tests skipped: heif-enc (Debian package libheif-examples) is not installed");

async function issueOf(bytes: Buffer) {
  const image = await decodeImage(bytes);
  return qualityIssue(measure(resizeTo(image, 128)), {
    width: image.originalWidth,
    height: image.originalHeight,
  });
}

async function imageErrorCode(bytes: Buffer): Promise<string> {
  const error = await decodeImage(bytes).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ImageError);
  return (error as ImageError).code;
}

describe("format sniffing", () => {
  it("recognises formats by their bytes, not their name", async () => {
    const leaf = await leafJpeg(64, 48);
    expect(sniffFormat(leaf)).toBe("jpeg");
    expect(sniffFormat(await sharp(leaf).png().toBuffer())).toBe("png");
    expect(sniffFormat(await sharp(leaf).webp().toBuffer())).toBe("webp");
    expect(sniffFormat(await sharp(leaf).gif().toBuffer())).toBeNull();
    expect(sniffFormat(Buffer.from("%PDF-1.7 not an image"))).toBeNull();
  });

  it("recognises HEIF by its ftyp brands and refuses AVIF", () => {
    const ftyp = (major: string, ...compatible: string[]) => {
      const box = Buffer.alloc(16 + 4 * compatible.length);
      box.writeUInt32BE(box.length, 0);
      box.write(`ftyp${major}`, 4, "latin1");
      for (const [i, brand] of compatible.entries()) box.write(brand, 16 + 4 * i, "latin1");
      return Buffer.concat([box, Buffer.alloc(16)]);
    };
    for (const brand of ["heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1"]) {
      expect(sniffFormat(ftyp(brand)), brand).toBe("heif");
    }
    expect(sniffFormat(ftyp("isom", "mp41"))).toBeNull(); // an MP4 video
    expect(sniffFormat(ftyp("avif", "mif1", "miaf"))).toBeNull();
  });
});

describe("decoding", () => {
  it("decodes JPEG, PNG and WebP to upright RGB with their original size", async () => {
    const leaf = await leafJpeg(640, 480);
    for (const bytes of [leaf, await sharp(leaf).png().toBuffer(), await sharp(leaf).webp().toBuffer()]) {
      const image = await decodeImage(bytes);
      expect([image.originalWidth, image.originalHeight]).toEqual([640, 480]);
      expect(image.data.length).toBe(image.width * image.height * 3);
    }
  });

  it("shrinks big photos to working size but keeps their original size", async () => {
    const big = await sharp(await leafJpeg(4000, 3000))
      .jpeg()
      .toBuffer();
    const image = await decodeImage(big);
    expect([image.originalWidth, image.originalHeight]).toEqual([4000, 3000]);
    expect(Math.min(image.width, image.height)).toBe(512);
  });

  it("applies the EXIF orientation", async () => {
    // Stored landscape: red left half, blue right half. Orientation 6 = rotate 90° clockwise to display,
    // so the upright photo is portrait with red on top.
    const stored = await sharp({ create: { width: 200, height: 100, channels: 3, background: "#0000ff" } })
      .composite([
        {
          input: { create: { width: 100, height: 100, channels: 3, background: "#ff0000" } },
          left: 0,
          top: 0,
        },
      ])
      .jpeg()
      .withMetadata({ orientation: 6 })
      .toBuffer();
    const image = await decodeImage(stored);
    expect([image.originalWidth, image.originalHeight]).toEqual([100, 200]);
    const pixel = (x: number, y: number) => [
      ...image.data.subarray((y * image.width + x) * 3, (y * image.width + x) * 3 + 3),
    ];
    expect(pixel(50, 20)[0]).toBeGreaterThan(200); // red on top
    expect(pixel(50, 180)[2]).toBeGreaterThan(200); // blue below
  });

  it.skipIf(!HEIF_ENC)("decodes a real HEIC photo", async () => {
    const heic = await toHeic(await leafJpeg(640, 480));
    expect(sniffFormat(heic)).toBe("heif");
    const image = await decodeImage(heic);
    expect(image.format).toBe("heif");
    expect([image.originalWidth, image.originalHeight]).toEqual([640, 480]);
    // The leaf's green survives the round trip.
    const centre = (240 * image.width + 320) * 3;
    expect(image.data[centre + 1]!).toBeGreaterThan(image.data[centre]!);
  });

  it("refuses empty, unsupported, corrupt, truncated and pixel-bomb files with their codes", async () => {
    const leaf = await leafJpeg(640, 480);
    expect(await imageErrorCode(Buffer.alloc(0))).toBe("empty");
    expect(await imageErrorCode(await sharp(leaf).gif().toBuffer())).toBe("unsupported_format");
    expect(await imageErrorCode(Buffer.from("hello, this is text, not a photo"))).toBe("unsupported_format");
    expect(await imageErrorCode(Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), Buffer.alloc(500, 7)]))).toBe(
      "corrupt",
    );
    expect(await imageErrorCode(leaf.subarray(0, Math.floor(leaf.length / 2)))).toBe("corrupt");
    expect(await imageErrorCode(pngBomb(50_000, 50_000))).toBe("too_many_pixels");
    expect(await imageErrorCode(Buffer.concat([leaf, Buffer.alloc(11 * 1024 * 1024)]))).toBe("too_large");
    const heifHeaderOnly = Buffer.concat([
      Buffer.from("0000001866747970686569630000000068656963", "hex"),
      Buffer.alloc(64),
    ]);
    expect(await imageErrorCode(heifHeaderOnly)).toBe("corrupt");
  });

  it("refuses a strip too elongated to be a photo", async () => {
    const strip = await sharp({ create: { width: 4000, height: 20, channels: 3, background: "#3a7d2a" } })
      .png()
      .toBuffer();
    expect(await imageErrorCode(strip)).toBe("unsupported_format");
  });
});

describe("quality checks", () => {
  it("finds no issue on a clear, well-lit leaf", async () => {
    expect(await issueOf(await leafJpeg())).toBeNull();
  });

  it("flags blur, darkness, overexposure, small size and missing leaf", async () => {
    const leaf = await leafJpeg();
    expect(await issueOf(await sharp(leaf).blur(8).jpeg().toBuffer())).toBe("blurry");
    expect(await issueOf(await sharp(leaf).linear(0.2, 0).jpeg().toBuffer())).toBe("too_dark");
    expect(await issueOf(await sharp(leaf).linear(2.5, 60).jpeg().toBuffer())).toBe("overexposed");
    expect(await issueOf(await sharp(leaf).resize(48, 36).jpeg().toBuffer())).toBe("too_small");
    const soil = await sharp({
      create: {
        width: 640,
        height: 480,
        channels: 3,
        background: "#000",
        noise: { type: "gaussian", mean: 100, sigma: 40 },
      },
    })
      .tint("#7a5230")
      .jpeg()
      .toBuffer();
    expect(await issueOf(soil)).toBe("no_leaf_visible");
  });
});
