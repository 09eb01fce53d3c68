import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadMetadata } from "../../src/diagnosis/model/metadata.js";

function modelWith(extra: Record<string, unknown>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "classes-"));
  const input = {
    size: 16,
    mean: [0, 0, 0],
    std: [1, 1, 1],
    color: "RGB",
    scale: 255,
    layout: "NCHW",
    resize: "",
  };
  const meta = { model_version: "t", input, temperature: 1, unsure_threshold: 0.5, non_plant_threshold: 0.5 };
  writeFileSync(path.join(dir, "classes.json"), JSON.stringify({ ...meta, ...extra }));
  return path.join(dir, "model.onnx");
}

describe("classes.json's other_plant_threshold", () => {
  it("is optional for a model without an other_plant class", async () => {
    const meta = await loadMetadata(modelWith({ classes: ["tomato__healthy", "non_plant"] }));
    expect(meta.other_plant_threshold).toBeUndefined();
  });

  it("is required, between 0 and 1, for a model with one", async () => {
    const classes = ["tomato__healthy", "other_plant", "non_plant"];
    await expect(loadMetadata(modelWith({ classes }))).rejects.toThrow(/other_plant_threshold/);
    await expect(loadMetadata(modelWith({ classes, other_plant_threshold: 1.5 }))).rejects.toThrow(
      /other_plant_threshold/,
    );
    expect(
      (await loadMetadata(modelWith({ classes, other_plant_threshold: 0.4 }))).other_plant_threshold,
    ).toBe(0.4);
  });
});
