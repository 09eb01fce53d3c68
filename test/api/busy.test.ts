import { describe, expect, it } from "vitest";
import { BusyError, ImageError } from "../../src/diagnosis/diagnoser.js";
import { BUSY_RETRY_SECONDS, createPool } from "../../src/diagnosis/model/pool.js";
import { testApp } from "./support/app.js";
import { multipartBody } from "./support/form.js";

// A full inference queue is a moment of overload, not a fault: the client is told when to come back.
describe("a full inference queue", () => {
  it("makes the pool reject the overflow with BusyError, and still run what it queued", async () => {
    const pool = createPool({ modelPath: null, threads: 1, maxQueue: 1 });
    try {
      // Not a HEIF file: every task that reaches the worker ends in ImageError, so each outcome says who answered.
      const garbage = new Uint8Array(64).fill(7);
      const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => pool.decodeHeif(garbage)));
      const reasons = outcomes.map((o) => (o.status === "rejected" ? o.reason : o.value));
      const busy = reasons.filter((r) => r instanceof BusyError);
      const ran = reasons.filter((r) => r instanceof ImageError);
      expect(busy.length + ran.length).toBe(8);
      expect(busy.length).toBeGreaterThan(0);
      expect(ran.length).toBeGreaterThan(0);
      expect((busy[0] as BusyError).retryAfterSeconds).toBe(BUSY_RETRY_SECONDS);
      // Once the queue has drained, the pool takes work again.
      await expect(pool.decodeHeif(garbage)).rejects.toBeInstanceOf(ImageError);
    } finally {
      await pool.close();
    }
  });

  it("answers 503 with Retry-After, the rate limit headers and {detail, request_id}", async () => {
    const { app, diagnoser } = await testApp();
    diagnoser.failWith = new BusyError(7);
    try {
      const { payload, headers } = await multipartBody({}, { data: Buffer.from([0xff, 0xd8, 0xff, 0xe0]) });
      const res = await app.inject({ method: "POST", url: "/diagnosis/", payload, headers });
      expect(res.statusCode).toBe(503);
      expect(res.headers["retry-after"]).toBe("7");
      expect(res.headers["x-ratelimit-limit"]).toBe("30");
      expect(res.json()).toEqual({
        detail: "The service is busy: retry in 7 seconds",
        request_id: res.headers["x-request-id"],
      });
    } finally {
      await app.close();
    }
  });
});
