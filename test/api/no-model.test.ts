import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { createDiagnoser } from "../../src/diagnosis/diagnose.js";
import type { Diagnoser } from "../../src/diagnosis/diagnoser.js";
import { testApp } from "./support/app.js";
import { multipartBody } from "./support/form.js";
import { photo } from "./support/images.js";

// A deployment whose model file is missing still checks photos, says plainly that it cannot diagnose, and
// reports itself degraded: it never invents a diagnosis.
const env = { MODEL_PATH: "models/no-such-model.onnx" };
type App = Awaited<ReturnType<typeof testApp>>["app"];
let app: App;
let diagnoser: Diagnoser;

beforeAll(async () => {
  const config = loadConfig(env);
  expect(config.modelPath).toMatch(/models\/no-such-model\.onnx$/);
  diagnoser = await createDiagnoser({ modelPath: config.modelPath, threads: 1 });
  ({ app } = await testApp({ env, deps: { diagnoser } }));
}, 60_000);
afterAll(async () => {
  await app.close();
  await diagnoser.close();
});

async function diagnose(image: Buffer, fields: Record<string, string> = {}) {
  const { payload, headers } = await multipartBody(fields, { data: image });
  const res = await app.inject({ method: "POST", url: "/diagnosis/", payload, headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

describe("without a disease model", () => {
  it("answers 200 with the image checks, no diagnosis and an error that says no model is loaded", async () => {
    const body = await diagnose(await photo(640, 480, "jpeg"), { language: "en", include_bbox: "true" });
    expect(body.image_analysis).toEqual({ is_plant: true, quality_issue: null, detected_crop: null });
    expect(body.crop_health).toBe("unknown");
    expect(body.diagnoses).toEqual([]);
    expect(body.detections).toEqual([]);
    expect(body.treatment).toEqual({
      immediate_actions: [],
      recommended_products: [],
      natural_alternatives: [],
      prevention: [],
      urgency: null,
    });
    expect(body.error).toEqual({
      code: "model_unavailable",
      message: "No disease model is loaded: the image was checked, but no diagnosis can be made.",
    });
    expect(body.additional_notes).toMatch(/No disease model is loaded/);
  });

  it("still runs the real quality checks", async () => {
    const dark = await sharp(await photo(640, 480, "jpeg"))
      .linear(0.15, 0)
      .jpeg()
      .toBuffer();
    const body = await diagnose(dark);
    expect(body.image_analysis.quality_issue).toBe("too_dark");
    expect(body.error.code).toBe("model_unavailable");
  });

  it("still refuses unusable files with 400", async () => {
    const { payload, headers } = await multipartBody({}, { data: Buffer.from("not a photo") });
    const res = await app.inject({ method: "POST", url: "/diagnosis/", payload, headers });
    expect(res.statusCode).toBe(400);
  });

  it("reports /health as degraded, naming the model", async () => {
    const res = await app.inject("/health");
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: "degraded", checks: { model: "not_ready" } });
  });
});
