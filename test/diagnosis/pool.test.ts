import { copyFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT_DIR } from "../../src/config.js";
import { loadMetadata } from "../../src/diagnosis/model/metadata.js";
import { createPool } from "../../src/diagnosis/model/pool.js";
import { SKIP_HEIC } from "../api/support/images.js";
import { leafJpeg, toHeic } from "./fixtures.js";

const MODEL = path.join(ROOT_DIR, "models", "disease-classifier.onnx");

describe.skipIf(SKIP_HEIC)("the worker pool", () => {
  it("runs inference while a slow HEIC (no thumbnail) is being decoded, even with one inference thread", async () => {
    const slow = await toHeic(await leafJpeg(2400, 1800));
    const { size } = (await loadMetadata(MODEL)).input;
    const pool = createPool({ modelPath: MODEL, threads: 1 });
    try {
      // Each run is handed its batch (the buffer moves to the worker), so each gets its own.
      const input = () => new Float32Array(3 * size * size);
      await pool.infer(input(), 1, size); // loads the model: the race below is between a decode and one inference
      let decoded = false;
      const decoding = pool.decodeHeif(slow).then((image) => {
        decoded = true;
        return image;
      });
      const output = await pool.infer(input(), 1, size);
      expect(output.logits.length).toBeGreaterThan(0);
      expect(decoded).toBe(false);
      expect((await decoding).decoded).toBe("primary");
    } finally {
      await pool.close();
    }
  });
});

describe("a model load that fails", () => {
  it("is tried again by the thread's next inference, not kept as its answer to every one", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "model-"));
    const later = path.join(dir, "disease-classifier.onnx");
    const { size } = (await loadMetadata(MODEL)).input;
    const pool = createPool({ modelPath: later, threads: 1 });
    try {
      const input = () => new Float32Array(3 * size * size);
      // The file is not there yet (a volume still mounting, a deploy replacing it).
      await expect(pool.infer(input(), 1, size)).rejects.toThrow();
      await copyFile(MODEL, later);
      const output = await pool.infer(input(), 1, size);
      expect(output.logits.length).toBeGreaterThan(0);
    } finally {
      await pool.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
