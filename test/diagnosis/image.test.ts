import sharp from "sharp";
import { describe, expect, it, vi } from "vitest";
import { ImageError } from "../../src/diagnosis/diagnoser.js";
import { decodeImage } from "../../src/diagnosis/image/decode.js";
import { decodeHeif, pickThumbnail, rotateRgba } from "../../src/diagnosis/image/heif.js";
import { SHRINK_FROM_SHORT_SIDE, WORKING_SHORT_SIDE } from "../../src/diagnosis/image/limits.js";
import { QUALITY_THRESHOLDS, qualityIssue } from "../../src/diagnosis/image/quality.js";
import { sniffFormat } from "../../src/diagnosis/image/sniff.js";
import { measure } from "../../src/diagnosis/image/stats.js";
import { resizeTo } from "../../src/diagnosis/model/preprocess.js";
import { withRotation, withTransformation } from "../api/support/heif-boxes.js";
import { SKIP_HEIC } from "../api/support/images.js";
import { DAMAGED_SPS_HEIC, leafJpeg, pngBomb, toHeic } from "./fixtures.js";

/** Stored landscape, 200×100: red left half, blue right half. */
function redLeftBlueRight(): Promise<Buffer> {
  return sharp({ create: { width: 200, height: 100, channels: 3, background: "#0000ff" } })
    .composite([
      { input: { create: { width: 100, height: 100, channels: 3, background: "#ff0000" } }, left: 0, top: 0 },
    ])
    .jpeg()
    .toBuffer();
}

function colourAt(image: { data: Buffer; width: number }, x: number, y: number): "red" | "blue" | "other" {
  const [r, g, b] = image.data.subarray((y * image.width + x) * 3, (y * image.width + x) * 3 + 3);
  if (r! > 200 && g! < 60 && b! < 60) return "red";
  if (b! > 200 && r! < 60 && g! < 60) return "blue";
  return "other";
}

/** The issue the checks raise, with `leavesFound` leaves from the model's leaf finder (none: no model). */
async function issueOf(bytes: Buffer, leavesFound = 0) {
  const image = await decodeImage(bytes);
  return qualityIssue(
    measure(resizeTo(image, 128)),
    { width: image.originalWidth, height: image.originalHeight },
    leavesFound,
  );
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
    expect(Math.min(image.width, image.height)).toBe(WORKING_SHORT_SIDE);
  });

  it("decodes a photo under twice the working size whole, for the model's own filter to shrink", async () => {
    const side = SHRINK_FROM_SHORT_SIDE - 96;
    const image = await decodeImage(await leafJpeg(side + 100, side));
    expect([image.width, image.height]).toEqual([side + 100, side]);
    const shrunk = await decodeImage(await leafJpeg(SHRINK_FROM_SHORT_SIDE + 100, SHRINK_FROM_SHORT_SIDE));
    expect(Math.min(shrunk.width, shrunk.height)).toBe(WORKING_SHORT_SIDE);
  });

  it("applies the EXIF orientation", async () => {
    // Orientation 6 = rotate 90° clockwise to display, so the upright photo is portrait with red on top.
    const stored = await sharp(await redLeftBlueRight())
      .withMetadata({ orientation: 6 })
      .jpeg()
      .toBuffer();
    const image = await decodeImage(stored);
    expect([image.originalWidth, image.originalHeight]).toEqual([100, 200]);
    expect(colourAt(image, 50, 20)).toBe("red");
    expect(colourAt(image, 50, 180)).toBe("blue");
  });

  // heif-enc 1.15 (Debian bookworm) neither rotates the pixels of an EXIF-rotated JPEG nor writes an irot box;
  // it copies the EXIF block, whose orientation HEIF readers ignore (MIAF: irot/imir are the orientation).
  // Phones write irot, so the box is added here, and libheif must apply it, once.
  it.skipIf(SKIP_HEIC)("turns a HEIC upright by its irot box", async () => {
    const stored = await toHeic(await redLeftBlueRight());
    const asStored = await decodeImage(stored);
    expect([asStored.originalWidth, asStored.originalHeight]).toEqual([200, 100]);
    expect(colourAt(asStored, 40, 50)).toBe("red");

    // irot counts anti-clockwise quarter turns: 3 is the iPhone's "rotate 90° clockwise" (EXIF 6).
    const clockwise = await decodeImage(withRotation(stored, 3));
    expect([clockwise.originalWidth, clockwise.originalHeight]).toEqual([100, 200]);
    expect(colourAt(clockwise, 50, 20)).toBe("red");
    expect(colourAt(clockwise, 50, 180)).toBe("blue");

    const anticlockwise = await decodeImage(withRotation(stored, 1));
    expect([anticlockwise.originalWidth, anticlockwise.originalHeight]).toEqual([100, 200]);
    expect(colourAt(anticlockwise, 50, 20)).toBe("blue");
    expect(colourAt(anticlockwise, 50, 180)).toBe("red");

    // The model-scale view is built from the upright pixels too.
    const view = resizeTo(clockwise, 128);
    expect(view.height).toBeGreaterThan(view.width);
  });

  it.skipIf(SKIP_HEIC)("decodes a real HEIC photo", async () => {
    const heic = await toHeic(await leafJpeg(640, 480));
    expect(sniffFormat(heic)).toBe("heif");
    const image = await decodeImage(heic);
    expect(image.format).toBe("heif");
    expect([image.originalWidth, image.originalHeight]).toEqual([640, 480]);
    // The leaf's green survives the round trip.
    const centre = (Math.floor(image.height / 2) * image.width + Math.floor(image.width / 2)) * 3;
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

  it("takes the header of a 50 MP phone photo (its pixels are decoded), not one just over the budget", async () => {
    // pngBomb's pixel data is a few bytes: a header within the budget gets as far as decoding them.
    expect(await imageErrorCode(pngBomb(8160, 6144))).toBe("corrupt");
    expect(await imageErrorCode(pngBomb(8064, 6048))).toBe("corrupt");
    expect(await imageErrorCode(pngBomb(8192, 6400))).toBe("too_many_pixels");
  });

  it("refuses a strip too elongated to be a photo", async () => {
    const strip = await sharp({ create: { width: 4000, height: 20, channels: 3, background: "#3a7d2a" } })
      .png()
      .toBuffer();
    expect(await imageErrorCode(strip)).toBe("unsupported_format");
  });
});

describe.skipIf(SKIP_HEIC)("an elongated HEIC", () => {
  it("is refused from its header, before libheif decodes it", async () => {
    const strip = await toHeic(
      await sharp({ create: { width: 2560, height: 96, channels: 3, background: "#3a7d2a" } })
        .jpeg()
        .toBuffer(),
    );
    await expect(decodeHeif(strip)).rejects.toMatchObject({ code: "unsupported_format" });
    expect(await imageErrorCode(strip)).toBe("unsupported_format");
  });
});

describe("a HEIC whose HEVC stream is damaged", () => {
  it("is refused as corrupt, and what the decoder printed goes into the error's cause, not onto the console", async () => {
    const printedToConsole = [vi.spyOn(console, "error"), vi.spyOn(console, "log")];
    try {
      const error = await decodeHeif(DAMAGED_SPS_HEIC).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ImageError);
      expect((error as ImageError).code).toBe("corrupt");
      expect(((error as ImageError).cause as Error).message).toMatch(/the decoder printed: SPS error: /);
      for (const spy of printedToConsole) expect(spy).not.toHaveBeenCalled();
      // The next HEIC starts with nothing printed before it.
      const after = await decodeHeif(DAMAGED_SPS_HEIC.subarray(0, 40)).then(
        () => null,
        (e: unknown) => e,
      );
      expect(after).toBeInstanceOf(ImageError);
      expect(((after as ImageError).cause as Error).message).not.toMatch(/SPS error/);
    } finally {
      for (const spy of printedToConsole) spy.mockRestore();
    }
  });
});

describe.skipIf(SKIP_HEIC)("HEIC thumbnails", () => {
  it("decodes a phone-style thumbnail instead of the full image, and keeps the photo's size", async () => {
    const stored = await toHeic(await leafJpeg(1200, 900), { thumbnail: 320 });
    const pixels = await decodeHeif(stored);
    expect(pixels.decoded).toBe("thumbnail");
    expect([pixels.width, pixels.height]).toEqual([320, 240]);
    expect([pixels.originalWidth, pixels.originalHeight]).toEqual([1200, 900]);
    const image = await decodeImage(stored);
    expect([image.originalWidth, image.originalHeight]).toEqual([1200, 900]);
    const centre = (Math.floor(image.height / 2) * image.width + Math.floor(image.width / 2)) * 3;
    expect(image.data[centre + 1]!).toBeGreaterThan(image.data[centre]!);
  });

  it("judges a photo's quality from its thumbnail as from its full image", async () => {
    const leaf = await leafJpeg(800, 600);
    const photos: Array<[Buffer, string | null]> = [
      [leaf, null],
      [await sharp(leaf).blur(20).jpeg().toBuffer(), "blurry"],
      [await sharp(leaf).linear(0.2, 0).jpeg().toBuffer(), "too_dark"],
    ];
    await Promise.all(
      photos.map(async ([jpeg, expected]) => {
        const [thumbnailed, plain] = await Promise.all([toHeic(jpeg, { thumbnail: 320 }), toHeic(jpeg)]);
        expect((await decodeHeif(thumbnailed)).decoded).toBe("thumbnail");
        expect(await issueOf(thumbnailed)).toBe(expected);
        expect(await issueOf(plain)).toBe(expected);
      }),
    );
  });

  it("decodes the full image when the thumbnail is too small to judge", async () => {
    const pixels = await decodeHeif(await toHeic(await leafJpeg(800, 600), { thumbnail: 160 }));
    expect(pixels.decoded).toBe("primary");
    expect([pixels.width, pixels.height]).toEqual([800, 600]);
  });

  it("turns the thumbnail as the photo when only the photo carries the rotation, as phones write it", async () => {
    const landscape = await sharp(await redLeftBlueRight())
      .resize(1000, 500)
      .jpeg()
      .toBuffer();
    const stored = await toHeic(landscape, { thumbnail: 500 });
    // irot 3 (270° anticlockwise) is the iPhone's portrait photo: red ends on top; irot 1 puts blue on top.
    for (const [quarterTurns, top, bottom] of [
      [3, "red", "blue"],
      [1, "blue", "red"],
    ] as const) {
      for (const items of ["all", "primary"] as const) {
        const rotated = withRotation(stored, quarterTurns, items);
        const pixels = await decodeHeif(rotated);
        expect(pixels.decoded, items).toBe("thumbnail");
        expect([pixels.width, pixels.height]).toEqual([250, 500]);
        expect([pixels.originalWidth, pixels.originalHeight]).toEqual([500, 1000]);
        const image = await decodeImage(rotated);
        const centre = Math.floor(image.width / 2);
        expect(colourAt(image, centre, Math.floor(image.height * 0.1)), `${quarterTurns} ${items}`).toBe(top);
        expect(colourAt(image, centre, Math.floor(image.height * 0.9)), `${quarterTurns} ${items}`).toBe(
          bottom,
        );
      }
    }
  });

  it("decodes the full image when the photo is mirrored and its thumbnail is not", async () => {
    // Red top left, blue top right, grey below: any mirror moves the red corner.
    const quadrants = await sharp({
      create: { width: 1000, height: 500, channels: 3, background: "#808080" },
    })
      .composite([
        {
          input: { create: { width: 500, height: 250, channels: 3, background: "#ff0000" } },
          left: 0,
          top: 0,
        },
        {
          input: { create: { width: 500, height: 250, channels: 3, background: "#0000ff" } },
          left: 500,
          top: 0,
        },
      ])
      .jpeg()
      .toBuffer();
    const stored = await toHeic(quadrants, { thumbnail: 500 });
    const corners = async (bytes: Buffer) => {
      const image = await decodeImage(bytes);
      const at = (fx: number, fy: number) =>
        colourAt(image, Math.floor(image.width * fx), Math.floor(image.height * fy));
      return [at(0.1, 0.1), at(0.9, 0.1), at(0.1, 0.9), at(0.9, 0.9)].join(" ");
    };
    expect(await corners(stored)).toBe("red blue other other");
    for (const axis of [0, 1]) {
      const onPrimary = withTransformation(stored, "imir", axis, "primary");
      const onBoth = withTransformation(stored, "imir", axis, "all");
      expect((await decodeHeif(onPrimary)).decoded, `axis ${axis}`).toBe("primary");
      expect((await decodeHeif(onBoth)).decoded, `axis ${axis}`).toBe("thumbnail");
      const mirrored = await corners(onPrimary);
      expect(mirrored, `axis ${axis}`).not.toBe("red blue other other");
      expect(await corners(onBoth), `axis ${axis}`).toBe(mirrored);
    }
  });

  it("turns pixels anticlockwise by quarter turns", () => {
    // 3×2, pixel values 0..5 row by row (in the red channel).
    const image = { data: new Uint8Array(24), width: 3, height: 2 };
    for (let i = 0; i < 6; i++) image.data[i * 4] = i;
    const reds = (turned: { data: Uint8Array }) => Array.from({ length: 6 }, (_, i) => turned.data[i * 4]);
    const quarter = rotateRgba(image, 90);
    expect([quarter.width, quarter.height]).toEqual([2, 3]);
    expect(reds(quarter)).toEqual([2, 5, 1, 4, 0, 3]);
    expect(reds(rotateRgba(image, 180))).toEqual([5, 4, 3, 2, 1, 0]);
    expect(reds(rotateRgba(image, 270))).toEqual([3, 0, 4, 1, 5, 2]);
    expect(rotateRgba(image, 360)).toBe(image);
  });

  it("picks the smallest thumbnail that is big enough and shaped like the photo", () => {
    const photo = { width: 4032, height: 3024 };
    expect(pickThumbnail(photo, [{ width: 320, height: 240 }])).toEqual({ width: 320, height: 240 });
    expect(
      pickThumbnail(photo, [
        { width: 640, height: 480 },
        { width: 320, height: 240 },
        { width: 160, height: 120 },
      ]),
    ).toEqual({ width: 320, height: 240 });
    expect(pickThumbnail(photo, [{ width: 200, height: 150 }])).toBeNull(); // too small to judge
    expect(pickThumbnail(photo, [{ width: 240, height: 320 }])).toBeNull(); // turned the other way
    expect(pickThumbnail(photo, [{ width: 320, height: 320 }])).toBeNull(); // cropped square
    expect(pickThumbnail({ width: 300, height: 240 }, [{ width: 300, height: 240 }])).toBeNull(); // not smaller
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

  it("calls a leaf of another colour missing only when the leaf finder saw no leaf either", async () => {
    // The leaf turned purple, as in a colour negative or a maize leaf short of phosphorus.
    const purple = await sharp(await leafJpeg())
      .modulate({ hue: 180 })
      .jpeg()
      .toBuffer();
    expect(measure(resizeTo(await decodeImage(purple), 128)).plantFraction).toBeLessThan(
      QUALITY_THRESHOLDS.plantFraction,
    );
    expect(await issueOf(purple)).toBe("no_leaf_visible");
    expect(await issueOf(purple, 1)).toBeNull();
  });

  it("judges light by the leaf: a well-lit leaf on a white sheet is not overexposed, the same leaf washed out is", async () => {
    const leaf = await sharp(await leafJpeg(320, 240))
      .extend({ left: 320, right: 320, background: "#ffffff" })
      .jpeg()
      .toBuffer();
    const stats = measure(resizeTo(await decodeImage(leaf), 128));
    expect(stats.clippedFraction).toBeGreaterThan(0.5);
    expect(stats.plantLuma).toBeLessThan(0.6);
    expect(await issueOf(leaf)).toBeNull();
    expect(await issueOf(await sharp(leaf).linear(2.5, 40).jpeg().toBuffer())).toBe("overexposed");
  });
});
