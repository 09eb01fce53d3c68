import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testApp } from "./support/app.js";
import { multipartBody } from "./support/form.js";

const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);
type App = Awaited<ReturnType<typeof testApp>>["app"];

async function diagnose(app: App, remoteAddress: string, extraHeaders: Record<string, string> = {}) {
  const { payload, headers } = await multipartBody({}, { data: JPEG });
  return app.inject({
    method: "POST",
    url: "/diagnosis/",
    payload,
    headers: { ...headers, ...extraHeaders },
    remoteAddress,
  });
}

function expectRateHeaders(res: { headers: Record<string, unknown> }, limit: number, remaining: number) {
  expect(res.headers["x-ratelimit-limit"]).toBe(String(limit));
  expect(res.headers["x-ratelimit-remaining"]).toBe(String(remaining));
  const reset = Number(res.headers["x-ratelimit-reset"]);
  const now = Date.now() / 1000;
  // A Unix timestamp in seconds, within the one-minute window.
  expect(reset).toBeGreaterThan(now);
  expect(reset).toBeLessThanOrEqual(Math.ceil(now) + 60);
}

describe("rate limits in memory (no REDIS_URL)", () => {
  let app: App;
  beforeAll(async () => {
    ({ app } = await testApp());
  });
  afterAll(() => app.close());

  it("allows 30 diagnoses per minute per IP, then 429 with Retry-After and the headers", async () => {
    const ip = "10.2.0.1";
    let first: Awaited<ReturnType<typeof diagnose>> | undefined;
    for (let i = 1; i <= 30; i++) {
      const res = await diagnose(app, ip);
      expect(res.statusCode).toBe(200);
      expectRateHeaders(res, 30, 30 - i);
      first ??= res;
      // Fixed window: every response of the window names the same reset time.
      expect(res.headers["x-ratelimit-reset"]).toBe(first.headers["x-ratelimit-reset"]);
    }
    const limited = await diagnose(app, ip);
    expect(limited.statusCode).toBe(429);
    expect(limited.headers["content-type"]).toMatch(/^application\/json/);
    expectRateHeaders(limited, 30, 0);
    const retryAfter = Number(limited.headers["retry-after"]);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const body = limited.json();
    expect(body.detail).toMatch(/Rate limit exceeded/);
    expect(body.request_id).toBe(limited.headers["x-request-id"]);
    expect(limited.headers["x-ratelimit-reset"]).toBe(first!.headers["x-ratelimit-reset"]);
  });

  it("counts per IP: another address still has its full budget", async () => {
    const res = await diagnose(app, "10.2.0.2");
    expect(res.statusCode).toBe(200);
    expectRateHeaders(res, 30, 29);
  });

  it("allows 100 health checks per minute per IP, a budget separate from diagnosis", async () => {
    const ip = "10.2.0.1"; // already out of diagnosis budget
    for (let i = 1; i <= 100; i++) {
      const res = await app.inject({ url: "/health", remoteAddress: ip });
      expect(res.statusCode).toBe(200);
      expectRateHeaders(res, 100, 100 - i);
    }
    const limited = await app.inject({ url: "/health", remoteAddress: ip });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers["retry-after"]).toBeDefined();
  });

  it("puts the headers on errors too: 400, 422, 404, docs", async () => {
    const ip = "10.2.0.3";
    const bad = await app.inject({
      method: "POST",
      url: "/diagnosis/",
      payload: { x: 1 },
      remoteAddress: ip,
    });
    expect(bad.statusCode).toBe(400);
    expectRateHeaders(bad, 30, 29);
    const { payload, headers } = await multipartBody({ language: "xx" });
    const invalid = await app.inject({
      method: "POST",
      url: "/diagnoses",
      payload,
      headers,
      remoteAddress: ip,
    });
    expect(invalid.statusCode).toBe(422);
    expectRateHeaders(invalid, 30, 28);
    const missing = await app.inject({ url: "/nowhere", remoteAddress: ip });
    expect(missing.statusCode).toBe(404);
    expectRateHeaders(missing, 300, 299);
    for (const url of ["/openapi.json", "/docs", "/redoc"]) {
      const res = await app.inject({ url, remoteAddress: ip });
      expect(res.statusCode).toBeLessThan(400);
      expect(res.headers["x-ratelimit-limit"]).toBe("300");
    }
  });

  it("ignores X-Forwarded-For unless TRUST_PROXY is set", async () => {
    const a = await diagnose(app, "10.2.0.4", { "x-forwarded-for": "1.1.1.1" });
    const b = await diagnose(app, "10.2.0.4", { "x-forwarded-for": "2.2.2.2" });
    expect(b.headers["x-ratelimit-remaining"]).toBe(String(Number(a.headers["x-ratelimit-remaining"]) - 1));

    const { app: proxied } = await testApp({ env: { TRUST_PROXY: "true" } });
    try {
      const c = await diagnose(proxied, "10.2.0.4", { "x-forwarded-for": "1.1.1.1" });
      const d = await diagnose(proxied, "10.2.0.4", { "x-forwarded-for": "2.2.2.2" });
      expect(c.headers["x-ratelimit-remaining"]).toBe("29");
      expect(d.headers["x-ratelimit-remaining"]).toBe("29");
    } finally {
      await proxied.close();
    }
  });

  it("takes its limits from RATE_LIMIT_DIAGNOSIS and RATE_LIMIT_HEALTH", async () => {
    const { app: custom } = await testApp({ env: { RATE_LIMIT_DIAGNOSIS: "2", RATE_LIMIT_HEALTH: "1" } });
    try {
      expect((await diagnose(custom, "10.2.0.5")).statusCode).toBe(200);
      expect((await diagnose(custom, "10.2.0.5")).statusCode).toBe(200);
      expect((await diagnose(custom, "10.2.0.5")).statusCode).toBe(429);
      expect((await custom.inject({ url: "/health", remoteAddress: "10.2.0.5" })).statusCode).toBe(200);
      expect((await custom.inject({ url: "/health", remoteAddress: "10.2.0.5" })).statusCode).toBe(429);
    } finally {
      await custom.close();
    }
  });
});

describe("rate limits shared through Redis (REDIS_URL)", () => {
  const prefix = `test-ratelimit-${randomUUID()}`;
  const clients: Redis[] = [];
  const apps: App[] = [];

  async function instance(): Promise<App> {
    const redis = new Redis("redis://127.0.0.1:6379");
    clients.push(redis);
    await once(redis, "ready");
    const { app } = await testApp({
      env: { REDIS_URL: "redis://127.0.0.1:6379", RATE_LIMIT_DIAGNOSIS: "10" },
      deps: { redis },
      rateLimitKeyPrefix: prefix,
    });
    apps.push(app);
    return app;
  }

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
    const redis = clients[0]!;
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await Promise.all(clients.map((c) => c.quit()));
  });

  it("enforces one limit across two instances on one Redis", async () => {
    const [a, b] = [await instance(), await instance()];
    const ip = "10.3.0.1";
    for (let i = 1; i <= 10; i++) {
      const res = await diagnose(i % 2 ? a : b, ip);
      expect(res.statusCode).toBe(200);
      expectRateHeaders(res, 10, 10 - i);
    }
    const fromA = await diagnose(a, ip);
    const fromB = await diagnose(b, ip);
    expect(fromA.statusCode).toBe(429);
    expect(fromB.statusCode).toBe(429);
    expect(Number(fromB.headers["retry-after"])).toBeLessThanOrEqual(60);
    expect(fromA.headers["x-ratelimit-reset"]).toBe(fromB.headers["x-ratelimit-reset"]);
    // The counters really live in Redis, under the configured prefix.
    expect(await clients[0]!.keys(`${prefix}:diagnosis:ip:${ip}`)).toHaveLength(1);
  });

  it("keeps limiting per instance while Redis is unreachable", async () => {
    const down = new Redis("redis://127.0.0.1:1", { lazyConnect: true, retryStrategy: () => null });
    clients.push(down);
    const { app } = await testApp({
      env: { REDIS_URL: "redis://127.0.0.1:1", RATE_LIMIT_DIAGNOSIS: "2" },
      deps: { redis: down },
      rateLimitKeyPrefix: prefix,
    });
    apps.push(app);
    expect((await diagnose(app, "10.3.0.2")).statusCode).toBe(200);
    expect((await diagnose(app, "10.3.0.2")).statusCode).toBe(200);
    const limited = await diagnose(app, "10.3.0.2");
    expect(limited.statusCode).toBe(429);
    expectRateHeaders(limited, 2, 0);
  });
});
