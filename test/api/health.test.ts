import { once } from "node:events";
import { readFileSync } from "node:fs";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { testApp } from "./support/app.js";

const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));

describe("GET /health", () => {
  it("is healthy with the package version when the model is ready", async () => {
    const { app } = await testApp();
    const res = await app.inject("/health");
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: "healthy", version, checks: { model: "ok" } });
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    expect(res.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    await app.close();
  });

  it("is degraded (still 200) while the model is not ready", async () => {
    const { app, diagnoser } = await testApp();
    diagnoser.ready = false;
    const res = await app.inject("/health");
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: "degraded", checks: { model: "not_ready" } });
    await app.close();
  });

  it("reports Redis when configured: ok when reachable, degraded when not", async () => {
    const up = new Redis("redis://127.0.0.1:6379");
    await once(up, "ready");
    const { app: withRedis } = await testApp({ deps: { redis: up } });
    expect((await withRedis.inject("/health")).json()).toMatchObject({
      status: "healthy",
      checks: { model: "ok", redis: "ok" },
    });
    await withRedis.close();
    await up.quit();

    const down = new Redis("redis://127.0.0.1:1", { lazyConnect: true, retryStrategy: () => null });
    const { app: withoutRedis } = await testApp({ deps: { redis: down } });
    const res = await withoutRedis.inject("/health");
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: "degraded", checks: { model: "ok", redis: "not_ready" } });
    await withoutRedis.close();
    down.disconnect();
  });

  it("answers HEAD and keeps the error shape for other methods", async () => {
    const { app } = await testApp();
    expect((await app.inject({ method: "HEAD", url: "/health" })).statusCode).toBe(200);
    const res = await app.inject({ method: "DELETE", url: "/health" });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      detail: "Not found: DELETE /health",
      request_id: res.headers["x-request-id"],
    });
    await app.close();
  });
});
