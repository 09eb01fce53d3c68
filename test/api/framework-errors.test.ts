import { describe, expect, it } from "vitest";
import { testApp } from "./support/app.js";

// Fastify rejects some requests before routing, where no hook runs; they still get the API's error contract.
describe("errors raised before routing", () => {
  it("answer a malformed URL with 400 {detail, request_id}, X-Request-ID and the rate limit headers", async () => {
    const { app } = await testApp({ env: { RATE_LIMIT_OTHER: "2" } });
    try {
      const res = await app.inject({ url: "/health%zz", remoteAddress: "10.7.0.1" });
      expect(res.statusCode).toBe(400);
      expect(res.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.json()).toEqual({
        detail: expect.stringContaining("/health%zz"),
        request_id: res.headers["x-request-id"],
      });
      expect(res.headers["x-ratelimit-limit"]).toBe("2");
      expect(res.headers["x-ratelimit-remaining"]).toBe("1");
      expect(Number(res.headers["x-ratelimit-reset"])).toBeGreaterThan(Date.now() / 1000);
    } finally {
      await app.close();
    }
  });

  it("count against the client's budget, so a flood of them ends in 429", async () => {
    const { app } = await testApp({ env: { RATE_LIMIT_OTHER: "2" } });
    try {
      const statuses = [];
      for (let i = 0; i < 3; i++) {
        statuses.push(
          (await app.inject({ url: "/diagnosis/%E0%A4%A", remoteAddress: "10.7.0.2" })).statusCode,
        );
      }
      expect(statuses).toEqual([400, 400, 429]);
      const limited = await app.inject({ url: "/docs/%zz", remoteAddress: "10.7.0.2" });
      expect(limited.statusCode).toBe(429);
      expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
      expect(limited.headers["x-request-id"]).toBe(limited.json().request_id);
      // Another client is not affected.
      expect((await app.inject({ url: "/health%zz", remoteAddress: "10.7.0.3" })).statusCode).toBe(400);
    } finally {
      await app.close();
    }
  });
});
