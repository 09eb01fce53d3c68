import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApiKey } from "../../src/config.js";
import { capturedLogger, testApp } from "./support/app.js";
import { multipartBody } from "./support/form.js";

const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);
const KEY = "sk_live_partner_a_8f3b2c1d9e7a6b5c4d3e2f1a";
const OTHER_KEY = "sk_live_partner_b_0a1b2c3d4e5f60718293a4b5";
const env = { API_KEYS: `partner-a:${hashApiKey(KEY)}:3,partner-b:${hashApiKey(OTHER_KEY)}:1000` };
type App = Awaited<ReturnType<typeof testApp>>["app"];

async function diagnose(app: App, remoteAddress: string, headers: Record<string, string>) {
  const body = await multipartBody({}, { data: JPEG });
  return app.inject({
    method: "POST",
    url: "/diagnosis/",
    payload: body.payload,
    headers: { ...body.headers, ...headers },
    remoteAddress,
  });
}

describe("API keys", () => {
  const log = capturedLogger();
  let app: App;
  beforeAll(async () => {
    ({ app } = await testApp({ env, logger: log.logger }));
  });
  afterAll(() => app.close());

  it("accepts a key in X-API-Key and applies the key's own limit", async () => {
    const res = await diagnose(app, "10.4.0.1", { "x-api-key": OTHER_KEY });
    expect(res.statusCode).toBe(200);
    expect(res.headers["x-ratelimit-limit"]).toBe("1000");
    expect(res.headers["x-ratelimit-remaining"]).toBe("999");
  });

  it("accepts the same key as Authorization: Bearer, counted on the same budget", async () => {
    const res = await diagnose(app, "10.4.0.2", { authorization: `Bearer ${OTHER_KEY}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers["x-ratelimit-remaining"]).toBe("998");
  });

  it("limits per key, whatever the IP, and answers 429 past it", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await diagnose(app, `10.4.1.${i}`, { "x-api-key": KEY });
      expect(res.statusCode).toBe(200);
      expect(res.headers["x-ratelimit-limit"]).toBe("3");
    }
    const limited = await diagnose(app, "10.4.1.9", { "x-api-key": KEY });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers["retry-after"]).toBeDefined();
    // The IP itself still has its anonymous budget.
    expect((await diagnose(app, "10.4.1.9", {})).statusCode).toBe(200);
  });

  it("never lowers the health budget below the per-IP default", async () => {
    const res = await app.inject({
      url: "/health",
      headers: { "x-api-key": KEY },
      remoteAddress: "10.4.2.1",
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers["x-ratelimit-limit"]).toBe("100");
  });

  it.each([
    ["x-api-key", "sk_live_wrong"],
    ["x-api-key", `${KEY}x`],
    ["authorization", "Bearer sk_live_wrong"],
  ])("rejects an unknown key in %s with 401 (not downgraded), with all headers", async (header, value) => {
    const res = await diagnose(app, "10.4.3.1", { [header]: value });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({
      detail: expect.stringMatching(/Invalid API key/),
      request_id: res.headers["x-request-id"],
    });
    expect(res.headers["www-authenticate"]).toMatch(/^Bearer/);
    expect(res.headers["x-ratelimit-limit"]).toBe("30");
    expect(res.headers["x-ratelimit-reset"]).toBeDefined();
  });

  it("rejects an unknown key on every route", async () => {
    const health = await app.inject({
      url: "/health",
      headers: { "x-api-key": "nope" },
      remoteAddress: "10.4.3.2",
    });
    expect(health.statusCode).toBe(401);
  });

  it("ignores a non-Bearer Authorization header (anonymous access)", async () => {
    const res = await diagnose(app, "10.4.3.3", { authorization: "Basic dXNlcjpwYXNz" });
    expect(res.statusCode).toBe(200);
    expect(res.headers["x-ratelimit-limit"]).toBe("30");
  });

  it("keeps keys out of the logs, even when headers are logged", async () => {
    app.log.info({ req: { headers: { "x-api-key": KEY, authorization: `Bearer ${KEY}` } } }, "headers");
    app.log.info({ headers: { "x-api-key": OTHER_KEY } }, "headers");
    const lines = log.lines();
    expect(lines.length).toBeGreaterThan(10);
    const all = lines.join("\n");
    expect(all).not.toContain(KEY);
    expect(all).not.toContain(OTHER_KEY);
    expect(all).not.toContain("sk_live_wrong");
    expect(all).toContain("[redacted]");
    // Every request's lines carry its request id.
    const requestLines = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === "incoming request");
    expect(requestLines.length).toBeGreaterThan(5);
    for (const line of requestLines) expect(line.request_id).toMatch(/^[0-9a-f-]{36}$/);
  });
});
