import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { createDiagnoser } from "../../src/diagnosis/diagnose.js";
import type { Diagnoser } from "../../src/diagnosis/diagnoser.js";
import { MAX_INPUT_MEGAPIXELS } from "../../src/diagnosis/image/limits.js";
import { sniffFormat } from "../../src/diagnosis/image/sniff.js";
import { leafJpeg } from "../diagnosis/fixtures.js";
import { capturedLogger, testApp } from "./support/app.js";
import { multipartBody } from "./support/form.js";
import { withClaimedSize, withMajorBrand } from "./support/heif-boxes.js";
import { heic, photo, SKIP_HEIC } from "./support/images.js";

// The real diagnosis core behind the route: image intake is checked end to end, from bytes to status code.
type App = Awaited<ReturnType<typeof testApp>>["app"];
let app: App;
let diagnoser: Diagnoser;
let ip = 0;

beforeAll(async () => {
  diagnoser = await createDiagnoser({ modelPath: loadConfig({}).modelPath, threads: 1 });
  ({ app } = await testApp({ deps: { diagnoser } }));
}, 120_000);
afterAll(async () => {
  await app.close();
  await diagnoser.close();
});

const PATHS = ["/diagnosis/", "/diagnoses/", "/diagnosis", "/diagnoses"];

async function upload(
  data: Buffer,
  filename: string,
  type: string,
  fields: Record<string, string> = {},
  url = "/diagnosis/",
) {
  const { payload, headers } = await multipartBody(fields, { data, filename, type });
  return app.inject({
    method: "POST",
    url,
    payload,
    headers,
    remoteAddress: `10.9.${Math.floor(++ip / 250)}.${ip % 250}`,
  });
}

/** The 4-byte CRC of a PNG chunk (type + data). */
function crc32(bytes: Buffer): number {
  let crc = ~0;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return ~crc >>> 0;
}

/** A tiny valid PNG whose header claims width × height pixels: a decompression bomb. */
async function pngClaiming(width: number, height: number): Promise<Buffer> {
  const png = Buffer.from(await photo(8, 8, "png"));
  png.writeUInt32BE(width, 16);
  png.writeUInt32BE(height, 20);
  png.writeUInt32BE(crc32(png.subarray(12, 29)), 29);
  return png;
}

/** A tiny JPEG whose frame header claims width × height pixels. */
async function jpegClaiming(width: number, height: number): Promise<Buffer> {
  const jpeg = Buffer.from(await photo(16, 16, "jpeg"));
  for (let i = 2; i < jpeg.length - 9; i++) {
    if (jpeg[i] === 0xff && (jpeg[i + 1] === 0xc0 || jpeg[i + 1] === 0xc2)) {
      jpeg.writeUInt16BE(height, i + 5);
      jpeg.writeUInt16BE(width, i + 7);
      return jpeg;
    }
  }
  throw new Error("no SOF marker");
}

function expectDiagnosis(res: Awaited<ReturnType<typeof upload>>) {
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json();
  expect(body.request_id).toBe(res.headers["x-request-id"]);
  expect(typeof body.image_analysis.is_plant).toBe("boolean");
  expect(body.is_plant).toBe(body.image_analysis.is_plant);
  expect(["healthy", "unhealthy", "unknown"]).toContain(body.crop_health);
  return body;
}

function expectBadImage(res: Awaited<ReturnType<typeof upload>>, detail?: RegExp) {
  expect(res.statusCode, res.body).toBe(400);
  const body = res.json();
  expect(Object.keys(body).sort()).toEqual(["detail", "request_id"]);
  expect(body.request_id).toBe(res.headers["x-request-id"]);
  expect(body.detail.length).toBeGreaterThan(5);
  expect(body.detail).not.toMatch(/\n\s+at |\.ts:\d|node_modules/);
  if (detail) expect(body.detail).toMatch(detail);
}

/** Decoder wording that must stay in the log: libheif's and libvips' own messages. */
const LIBRARY_TEXT =
  /libheif|iloc|meta box|HEIF processing|heif_|VipsJpeg|vips_|Premature end|libspng|read error/i;

describe("image formats through POST /diagnosis/ (real core)", () => {
  it.each(["jpeg", "png", "webp"] as const)("diagnoses a %s photo", async (format) => {
    expectDiagnosis(await upload(await photo(640, 480, format), `leaf.${format}`, `image/${format}`));
  });

  it("recognises a mislabelled file from its bytes", async () => {
    expectDiagnosis(await upload(await photo(640, 480, "png"), "photo.jpg", "image/jpeg"));
    expectDiagnosis(await upload(await photo(640, 480, "webp"), "scan.pdf", "application/pdf"));
  });

  it("fills detections only with include_bbox=true", async () => {
    const jpeg = await photo(640, 480, "jpeg");
    expect(expectDiagnosis(await upload(jpeg, "a.jpg", "image/jpeg")).detections).toBeNull();
    expect(
      Array.isArray(
        expectDiagnosis(await upload(jpeg, "a.jpg", "image/jpeg", { include_bbox: "true" })).detections,
      ),
    ).toBe(true);
  });

  it("refuses an empty file", async () => {
    expectBadImage(await upload(Buffer.alloc(0), "empty.jpg", "image/jpeg"));
  });

  it("refuses unsupported formats whatever they are labelled", async () => {
    const gif = Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64");
    expectBadImage(await upload(gif, "leaf.jpg", "image/jpeg"));
    expectBadImage(await upload(Buffer.from("just some text, not an image"), "leaf.png", "image/png"));
    const tiff = await (await import("sharp"))
      .default(await photo(32, 32, "png"))
      .tiff()
      .toBuffer();
    expectBadImage(await upload(tiff, "leaf.tiff", "image/tiff"));
  });
});

describe.each(PATHS)("unusable images on POST %s (real core)", (url) => {
  it("refuses an image over 10 MB", async () => {
    const big = Buffer.concat([await photo(64, 64, "jpeg"), Buffer.alloc(10 * 1024 * 1024 + 1, 0x20)]);
    expectBadImage(await upload(big, "big.jpg", "image/jpeg", {}, url), /larger than 10 MB/);
  });

  it("refuses pixel bombs before decoding them", async () => {
    const megapixels = new RegExp(`50000×50000 pixels; at most ${MAX_INPUT_MEGAPIXELS} megapixels`);
    expectBadImage(
      await upload(await pngClaiming(50_000, 50_000), "bomb.png", "image/png", {}, url),
      megapixels,
    );
    expectBadImage(
      await upload(await jpegClaiming(60_000, 60_000), "bomb.jpg", "image/jpeg", {}, url),
      /60000×60000 pixels/,
    );
  });

  it("refuses a truncated JPEG with a fixed message, not the decoder's", async () => {
    const jpeg = await photo(640, 480, "jpeg");
    const res = await upload(jpeg.subarray(0, Math.floor(jpeg.length / 3)), "cut.jpg", "image/jpeg", {}, url);
    expectBadImage(res, /^the JPEG image is truncated or corrupt$/);
  });

  it.skipIf(SKIP_HEIC)(
    "refuses a truncated HEIC (decoded on a worker thread) with 400, not 500",
    async () => {
      const bytes = await heic(await photo(640, 480, "jpeg"));
      const res = await upload(
        bytes.subarray(0, Math.floor(bytes.length / 2)),
        "cut.heic",
        "image/heic",
        {},
        url,
      );
      expectBadImage(res, /^the HEIC\/HEIF image could not be decoded: it is truncated or corrupt$/);
    },
  );
});

describe.skipIf(SKIP_HEIC)("HEIC and HEIF through POST /diagnosis/ (real core)", () => {
  let bytes: Buffer;
  beforeAll(async () => {
    bytes = await heic(await photo(640, 480, "jpeg"));
  });

  it("diagnoses a real HEIC made by heif-enc, declared as image/heic or image/heif", async () => {
    expect(bytes.subarray(4, 12).toString("latin1")).toBe("ftypheic");
    expectDiagnosis(await upload(bytes, "IMG_0001.HEIC", "image/heic"));
    expectDiagnosis(await upload(bytes, "photo.heif", "image/heif"));
  });

  it("diagnoses a phone-style HEIC through its thumbnail, decoded on a worker thread", async () => {
    // A leaf, not noise: noise is unlike anything the model knows, and its distance to the training photos
    // depends on how each decoder smooths it, so a thumbnail and the full photo may rightly be judged apart.
    const jpeg = await leafJpeg(1200, 900);
    const phone = expectDiagnosis(
      await upload(await heic(jpeg, { thumbnail: 320 }), "IMG_0002.HEIC", "image/heic"),
    );
    const asJpeg = expectDiagnosis(await upload(jpeg, "IMG_0002.JPG", "image/jpeg"));
    expect(phone.is_plant).toBe(asJpeg.is_plant);
  });

  it("diagnoses a .heif file whose major brand is mif1", async () => {
    const heif = withMajorBrand(bytes, "mif1");
    expect(heif.subarray(4, 12).toString("latin1")).toBe("ftypmif1");
    expect(heif.subarray(16, 28).toString("latin1")).toContain("heic");
    expect(sniffFormat(heif)).toBe("heif");
    expectDiagnosis(await upload(heif, "photo.heif", "image/heif"));
  });

  it("refuses a HEIC whose boxes are scrambled", async () => {
    const scrambled = Buffer.from(bytes);
    const meta = scrambled.indexOf("meta");
    scrambled.fill(0xab, meta + 40, meta + 200);
    const res = await upload(scrambled, "broken.heic", "image/heic");
    expectBadImage(res, /^the HEIC\/HEIF file could not be read: it is truncated or corrupt$/);
    expect(res.json().detail).not.toMatch(LIBRARY_TEXT);
  });

  it("logs libheif's own words with the request id, and keeps them out of the response", async () => {
    const { logger, lines } = capturedLogger();
    const { app: logged } = await testApp({ deps: { diagnoser }, logger });
    try {
      const { payload, headers } = await multipartBody(
        {},
        { data: bytes.subarray(0, 400), filename: "cut.heic", type: "image/heic" },
      );
      const res = await logged.inject({ method: "POST", url: "/diagnosis/", payload, headers });
      expectBadImage(res);
      expect(res.body).not.toMatch(LIBRARY_TEXT);
      const line = lines()
        .map((l) => JSON.parse(l))
        .find((l) => l.msg === "unusable image");
      expect(line).toMatchObject({ request_id: res.headers["x-request-id"], code: "corrupt", level: 30 });
      // libheif's own heif_error message, read on the worker thread, reaches the log line.
      expect(line.cause).toMatch(/^libheif: Invalid input: ./);
    } finally {
      await logged.close();
    }
  });

  it("refuses a HEIC whose header claims too many pixels, before decoding it", async () => {
    const res = await upload(withClaimedSize(bytes, 10_000, 10_000), "bomb.heic", "image/heic");
    expectBadImage(res, new RegExp(`10000×10000 pixels; at most ${MAX_INPUT_MEGAPIXELS} megapixels`));
  });

  it("still serves after all of the above", async () => {
    expectDiagnosis(await upload(bytes, "IMG_0002.HEIC", "image/heic"));
    expectDiagnosis(await upload(await photo(320, 240, "jpeg"), "a.jpg", "image/jpeg"));
    expect((await app.inject("/health")).statusCode).toBe(200);
  });
});
