import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFuzzTarget } from "../fuzz/server.js";
import { fuzz, makeCase } from "../fuzz/uploads.js";

// A few hundred seeded malformed uploads against the real core over real sockets; `npm run fuzz` runs
// thousands more with the same generator.
let target: Awaited<ReturnType<typeof startFuzzTarget>>;
beforeAll(async () => {
  target = await startFuzzTarget();
});
afterAll(() => target?.close());

describe("malformed uploads", () => {
  it("are each answered within 5 s, never with a 5xx, in the error shape", async () => {
    const report = await fuzz(target.port, {
      count: 300,
      firstSeed: 1,
      concurrency: 6,
      boundMs: 5_000,
      seeds: target.seeds,
    });
    expect(report.failures).toEqual([]);
    expect(report.cases).toBe(300);
    // The generator reaches both the multipart parser's refusals and the decoders'.
    expect(report.statuses[400]).toBeGreaterThan(50);
    expect(report.statuses[422]).toBeGreaterThan(10);
    expect(report.statuses[200]).toBeGreaterThan(5);
  }, 120_000);

  it("are the same for the same seed", () => {
    expect(makeCase(42, target.seeds).request).toEqual(makeCase(42, target.seeds).request);
  });
});
