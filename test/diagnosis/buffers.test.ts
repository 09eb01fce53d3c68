import { describe, expect, it } from "vitest";
import { uninitialisedBytes, uninitialisedFloats } from "../../src/diagnosis/buffers.js";

describe("uninitialised typed arrays", () => {
  it.each([
    ["bytes", uninitialisedBytes, 1],
    ["floats", uninitialisedFloats, 4],
  ] as const)("%s own their whole buffer, so it can be handed to a worker", (_, make, width) => {
    // Sizes on both sides of Node's shared pool (8 KiB): a pooled slice would share its buffer with other data.
    for (const length of [1, 1000, 76_800, 1_000_000]) {
      const array = make(length);
      expect(array.length).toBe(length);
      expect(array.byteOffset).toBe(0);
      expect(array.buffer.byteLength).toBe(length * width);
      array.fill(7);
      const moved = structuredClone(array, { transfer: [array.buffer] });
      expect(array.buffer.byteLength).toBe(0);
      expect(moved[length - 1]).toBe(7);
    }
  });

  it("gives a plain typed array, not a Buffer", () => {
    expect(Object.getPrototypeOf(uninitialisedBytes(16))).toBe(Uint8Array.prototype);
    expect(Object.getPrototypeOf(uninitialisedFloats(16))).toBe(Float32Array.prototype);
  });
});
