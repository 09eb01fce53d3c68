import { readFileSync } from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDiagnoser } from "../../src/diagnosis/diagnose.js";
import { type Diagnoser, ImageError } from "../../src/diagnosis/diagnoser.js";
import { CROPS, type DiagnosisContext, type DiagnosisResult } from "../../src/diagnosis/types.js";
import { documentJpeg, leafJpeg, toHeic } from "./fixtures.js";
import { DATASETS_DIR, HAVE_DATASETS, MODEL_PATH } from "./helpers.js";

const REQUEST_ID = "3f1c2a9e-8a4b-4e0f-9a51-6d2f7f0b8c11";
const context = (extra: Partial<DiagnosisContext> = {}): DiagnosisContext => ({
  language: "en",
  detailLevel: "standard",
  includeBbox: false,
  ...extra,
});

function expectWellFormed(result: DiagnosisResult): void {
  expect(result.request_id).toBe(REQUEST_ID);
  expect(result.is_plant).toBe(result.image_analysis.is_plant);
  for (const d of result.diagnoses) {
    expect(d.confidence).toBeGreaterThan(0);
    expect(d.confidence).toBeLessThanOrEqual(1);
    expect(d.name.length).toBeGreaterThan(0);
  }
  const confidences = result.diagnoses.map((d) => d.confidence);
  expect(confidences).toEqual([...confidences].sort((a, b) => b - a));
  if (result.crop_health !== "unhealthy") expect(result.diagnoses).toEqual([]);
}

describe("diagnosis with the committed model", () => {
  let diagnoser: Diagnoser;
  beforeAll(async () => {
    diagnoser = await createDiagnoser({ modelPath: MODEL_PATH, threads: 1 });
  });
  afterAll(() => diagnoser?.close());

  it("has the model loaded (these tests never run without it)", () => {
    expect(diagnoser.modelReady()).toBe(true);
  });

  it("calls a leaf-coloured photo a plant and a document not a plant", async () => {
    const leaf = await diagnoser.diagnose(await leafJpeg(), context(), REQUEST_ID);
    expectWellFormed(leaf);
    expect(leaf.image_analysis.is_plant).toBe(true);
    expect(leaf.image_analysis.quality_issue).toBeNull();
    expect(leaf.error).toBeNull();

    const page = await diagnoser.diagnose(await documentJpeg(), context(), REQUEST_ID);
    expectWellFormed(page);
    expect(page.image_analysis.is_plant).toBe(false);
    expect(page.crop_health).toBe("unknown");
    expect(page.diagnoses).toEqual([]);
    expect(page.treatment.urgency).toBeNull();
    expect(page.additional_notes).toBeTruthy();
  });

  it("diagnoses a HEIC photo like the same photo as JPEG", async (ctx) => {
    const jpeg = await leafJpeg();
    const heic = await toHeic(jpeg).catch((error: unknown) => {
      console.warn(`HEIC diagnosis test skipped: heif-enc failed or is missing (${String(error)})`);
      return null;
    });
    if (!heic) return ctx.skip();
    const fromHeic = await diagnoser.diagnose(heic, context(), REQUEST_ID);
    const fromJpeg = await diagnoser.diagnose(jpeg, context(), REQUEST_ID);
    expect(fromHeic.image_analysis).toEqual(fromJpeg.image_analysis);
    expect(fromHeic.crop_health).toBe(fromJpeg.crop_health);
  });

  it("reports the quality issue of a poor photo, with advice", async () => {
    const leaf = await leafJpeg();
    const cases: [Buffer, string][] = [
      [await sharp(leaf).blur(8).jpeg().toBuffer(), "blurry"],
      [await sharp(leaf).linear(0.2, 0).jpeg().toBuffer(), "too_dark"],
      [await sharp(leaf).resize(48, 36).jpeg().toBuffer(), "too_small"],
    ];
    for (const [bytes, issue] of cases) {
      const result = await diagnoser.diagnose(bytes, context(), REQUEST_ID);
      expect(result.image_analysis.quality_issue).toBe(issue);
      expect(result.additional_notes).toBeTruthy();
    }
  });

  it("restricts the answer to a stated crop and says when the photo looks like another", async () => {
    const plain = await diagnoser.diagnose(await leafJpeg(), context(), REQUEST_ID);
    const seen = plain.image_analysis.detected_crop;
    expect(seen, "the model names a crop for a leaf-coloured photo").toBeTruthy();
    // Another crop than the one the model sees: nearly all its belief is elsewhere.
    const other = CROPS.find((crop) => crop !== seen)!;
    const result = await diagnoser.diagnose(await leafJpeg(), context({ cropType: other }), REQUEST_ID);
    for (const d of result.diagnoses) expect(d.id.startsWith(`${other}__`)).toBe(true);
    expect(result.additional_notes).toContain(other);
    expect(result.additional_notes).not.toBe(plain.additional_notes);
  });

  it("fills detections only when asked", async () => {
    const leaf = await leafJpeg();
    expect((await diagnoser.diagnose(leaf, context(), REQUEST_ID)).detections).toBeNull();
    expect(
      Array.isArray((await diagnoser.diagnose(leaf, context({ includeBbox: true }), REQUEST_ID)).detections),
    ).toBe(true);
  });

  it("answers in the asked language", async () => {
    const page = await documentJpeg();
    const en = await diagnoser.diagnose(page, context({ language: "en" }), REQUEST_ID);
    const sw = await diagnoser.diagnose(page, context({ language: "sw" }), REQUEST_ID);
    expect(sw.additional_notes).toBeTruthy();
    expect(sw.additional_notes).not.toBe(en.additional_notes);
  });

  it("throws ImageError for unusable files, and nothing else for mangled ones", async () => {
    await expect(diagnoser.diagnose(Buffer.alloc(0), context(), REQUEST_ID)).rejects.toBeInstanceOf(
      ImageError,
    );
    const leaf = await leafJpeg(320, 240);
    // Mangled uploads: a client must never be able to crash or 500 the service with a file.
    let seed = 7;
    const random = () => {
      seed = (seed * 48271) % 2147483647;
      return seed / 2147483647;
    };
    for (let i = 0; i < 25; i++) {
      const bytes = Buffer.from(leaf);
      for (let k = 0; k < 20; k++)
        bytes[Math.floor(20 + random() * (bytes.length - 20))] = Math.floor(random() * 256);
      const cut = i % 5 === 0 ? bytes.subarray(0, Math.floor(random() * bytes.length)) : bytes;
      await diagnoser.diagnose(cut, context(), REQUEST_ID).catch((error: unknown) => {
        expect(error).toBeInstanceOf(ImageError);
      });
    }
  });

  describe.skipIf(!HAVE_DATASETS)("on real test-split photos", () => {
    /** The first test-split photo of a disease that the model names with confidence. */
    async function confidentDiseasePhoto(): Promise<{
      bytes: Buffer;
      label: string;
      result: DiagnosisResult;
    }> {
      const split = readFileSync(path.join(MODEL_PATH, "..", "training", "split.csv"), "utf8")
        .trim()
        .split(/\r?\n/);
      const rows = split
        .slice(1)
        .map((l) => l.split(","))
        .filter((f) => f[4] === "test" && f[1] !== "non_plant" && !f[1]!.endsWith("__healthy"));
      for (const [file, label] of rows.filter((_, i) => i % 7 === 0).slice(0, 150)) {
        const bytes = readFileSync(path.join(DATASETS_DIR, file!));
        const result = await diagnoser.diagnose(bytes, context({ includeBbox: true }), REQUEST_ID);
        if (result.diagnoses[0]?.id === label) return { bytes, label: label!, result };
      }
      throw new Error("the model named no disease correctly on 150 test photos");
    }

    it("names the disease with treatment, urgency and normalized boxes", async () => {
      const { result } = await confidentDiseasePhoto();
      expectWellFormed(result);
      expect(result.crop_health).toBe("unhealthy");
      expect(result.treatment.urgency).toBe(result.diagnoses[0]!.urgency);
      expect(result.detections!.length).toBeGreaterThan(0);
      for (const { bbox, name, confidence } of result.detections!) {
        expect(name).toMatch(/^[a-z0-9]+(_[a-z0-9]+)*$/);
        expect(confidence).toBeGreaterThan(0);
        expect(bbox[0] + bbox[2]).toBeLessThanOrEqual(1.0005);
        expect(bbox[1] + bbox[3]).toBeLessThanOrEqual(1.0005);
        for (const v of bbox) expect(v).toBeGreaterThanOrEqual(0);
      }
    });

    it("keeps only the stated crop's diseases when the crop is given", async () => {
      const { bytes, label } = await confidentDiseasePhoto();
      const otherCrop = label.startsWith("tomato__") ? "potato" : "tomato";
      const result = await diagnoser.diagnose(bytes, context({ cropType: otherCrop }), REQUEST_ID);
      for (const d of result.diagnoses) expect(d.id.startsWith(`${otherCrop}__`)).toBe(true);
      expect(result.diagnoses.some((d) => d.id === label)).toBe(false);
      expect(result.additional_notes).toBeTruthy();
    });
  });
});

describe("diagnosis without a model", () => {
  let diagnoser: Diagnoser;
  beforeAll(async () => {
    diagnoser = await createDiagnoser({ modelPath: path.join(MODEL_PATH, "..", "absent.onnx"), threads: 1 });
  });
  afterAll(() => diagnoser?.close());

  it("still checks the image, names no disease and says why", async () => {
    expect(diagnoser.modelReady()).toBe(false);
    const leaf = await diagnoser.diagnose(await leafJpeg(), context({ includeBbox: true }), REQUEST_ID);
    expect(leaf.error?.code).toBe("model_unavailable");
    expect(leaf.crop_health).toBe("unknown");
    expect(leaf.diagnoses).toEqual([]);
    expect(leaf.additional_notes).toBeTruthy();
    expect(leaf.image_analysis.is_plant).toBe(true);
    const page = await diagnoser.diagnose(await documentJpeg(), context(), REQUEST_ID);
    expect(page.image_analysis.is_plant).toBe(false);
    const blurred = await diagnoser.diagnose(
      await sharp(await leafJpeg())
        .blur(8)
        .jpeg()
        .toBuffer(),
      context(),
      REQUEST_ID,
    );
    expect(blurred.image_analysis.quality_issue).toBe("blurry");
  });
});
