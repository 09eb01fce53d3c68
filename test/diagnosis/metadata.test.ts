import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadMetadata } from "../../src/diagnosis/model/metadata.js";

const VIEWS = {
  working_size: 256,
  leaf_crops: 3,
  margin: 1.3,
  max_area: 0.5,
  min_side: 0.2,
  zoom: 0.6,
  zoom_below: 0.8,
};

/** A classes.json that follows the contract (CONTRACT.md), with `changes` merged over it; the path of its model. */
function modelWith(changes: Record<string, unknown>): string {
  const dir = mkdtempSync(path.join(tmpdir(), "classes-"));
  const meta = {
    model_version: "t",
    input: {
      size: 32,
      mean: [0, 0, 0],
      std: [1, 1, 1],
      color: "RGB",
      scale: 255,
      layout: "NCHW",
      resize: "",
    },
    classes: ["tomato__healthy", "tomato__late_blight", "other_plant", "non_plant"],
    temperature: 1,
    unsure_threshold: 0.5,
    non_plant_threshold: 0.5,
    distance_threshold: 400,
    other_plant_threshold: 0.4,
    leaves: { threshold: 0.3, max: 10, nms_iou: 0.5 },
    views: VIEWS,
  };
  writeFileSync(path.join(dir, "classes.json"), JSON.stringify({ ...meta, ...changes }));
  return path.join(dir, "model.onnx");
}

describe("classes.json, the model's contract with the server", () => {
  it("is read when it follows the contract", async () => {
    const meta = await loadMetadata(modelWith({}));
    expect(meta.other_plant_threshold).toBe(0.4);
    expect(meta.views.leaf_crops).toBe(3);
  });

  it("needs other_plant and non_plant classes, and other_plant_threshold between 0 and 1", async () => {
    await expect(loadMetadata(modelWith({ classes: ["tomato__healthy", "non_plant"] }))).rejects.toThrow(
      /"other_plant"/,
    );
    await expect(loadMetadata(modelWith({ other_plant_threshold: undefined }))).rejects.toThrow(
      /other_plant_threshold/,
    );
    await expect(loadMetadata(modelWith({ other_plant_threshold: 1.5 }))).rejects.toThrow(
      /other_plant_threshold/,
    );
  });

  it("needs a positive distance threshold and an input size the leaf grid divides", async () => {
    await expect(loadMetadata(modelWith({ distance_threshold: 0 }))).rejects.toThrow(/distance_threshold/);
    await expect(
      loadMetadata(
        modelWith({
          input: { size: 40, mean: [0, 0, 0], std: [1, 1, 1], color: "RGB", scale: 255, layout: "NCHW" },
        }),
      ),
    ).rejects.toThrow(/not a multiple of 16/);
  });

  it("needs the leaf and view settings, each in its range, and names every problem at once", async () => {
    const error = await loadMetadata(
      modelWith({ leaves: { threshold: 0.3, max: 0, nms_iou: 0.5 }, views: undefined, temperature: -1 }),
    ).catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/temperature/);
    expect((error as Error).message).toMatch(/leaves must give/);
    expect((error as Error).message).toMatch(/views must give/);
    await expect(loadMetadata(modelWith({ views: { ...VIEWS, min_side: 0 } }))).rejects.toThrow(
      /views must give/,
    );
    // A closer view as large as the centre view is no closer view.
    await expect(loadMetadata(modelWith({ views: { ...VIEWS, zoom: 1 } }))).rejects.toThrow(/zoom \[0-1\)/);
    // No leaf crops and no closer view is a valid setting: the centre view alone.
    const centreOnly = await loadMetadata(modelWith({ views: { ...VIEWS, leaf_crops: 0, zoom: 0 } }));
    expect(centreOnly.views.leaf_crops).toBe(0);
  });
});
