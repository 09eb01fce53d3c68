import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApiKey } from "../../src/config.js";
import type { DiagnosisContext, DiagnosisResult } from "../../src/diagnosis/types.js";
import { testApp } from "./support/app.js";
import { multipartBody } from "./support/form.js";
import { cannedResult } from "./support/stub-diagnoser.js";

const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);
type App = Awaited<ReturnType<typeof testApp>>["app"];

let app: App;
let base: string;
beforeAll(async () => {
  ({ app } = await testApp({ env: { RATE_LIMIT_DIAGNOSIS: "5" } }));
  base = await app.listen({ port: 0, host: "127.0.0.1" });
});
afterAll(() => app.close());

async function postForm(fields: Record<string, string>, file?: { data: Buffer }) {
  const { payload, headers } = await multipartBody(fields, file);
  return fetch(`${base}/diagnosis/`, { method: "POST", body: payload, headers });
}

describe("over a real socket", () => {
  it("serves a diagnosis with the request id and rate limit headers", async () => {
    const res = await postForm({ include_bbox: "true" }, { data: JPEG });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await res.json()) as { request_id: string; detections: unknown };
    expect(res.headers.get("x-request-id")).toBe(body.request_id);
    expect(res.headers.get("x-ratelimit-limit")).toBe("5");
    expect(res.headers.get("x-ratelimit-remaining")).toBe("4");
    expect(Number(res.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000);
    expect(Array.isArray(body.detections)).toBe(true);
  });

  it("answers 400 to an image over 10 MB while the upload is still streaming", async () => {
    const res = await postForm({}, { data: Buffer.alloc(11 * 1024 * 1024, 1) });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/10 MB/);
  });

  it("answers 422 and 404 in the error shape", async () => {
    const invalid = await postForm({ detail_level: "max" }, { data: JPEG });
    expect(invalid.status).toBe(422);
    expect(((await invalid.json()) as { detail: { loc: string[] }[] }).detail[0]!.loc).toEqual([
      "body",
      "detail_level",
    ]);
    const missing = await fetch(`${base}/diagnosis/extra`, { method: "POST" });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("x-request-id")).toBeTruthy();
  });

  it("answers 429 with Retry-After once the budget is spent", async () => {
    let last: Response | undefined;
    for (let i = 0; i < 5; i++) last = await postForm({}, { data: JPEG });
    expect(last!.status).toBe(429);
    expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await last!.json()).toMatchObject({ detail: expect.stringMatching(/Rate limit exceeded/) });
  });

  it("survives a client that disconnects mid-upload, and a malformed request line", async () => {
    const { port } = new URL(base);
    await new Promise<void>((resolve) => {
      const socket = connect(Number(port), "127.0.0.1", () => {
        socket.write(
          "POST /diagnosis/ HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n" +
            '--b\r\nContent-Disposition: form-data; name="image"; filename="a.jpg"\r\n\r\n\xff\xd8\xff',
        );
        setTimeout(() => socket.destroy(), 50);
      });
      socket.on("close", () => resolve());
      socket.on("error", () => resolve());
    });
    const garbage = await new Promise<string>((resolve) => {
      let data = "";
      const socket = connect(Number(port), "127.0.0.1", () => socket.write("GARBAGE\r\n\r\n"));
      socket.on("data", (chunk) => {
        data += chunk;
      });
      socket.on("close", () => resolve(data));
      socket.on("error", () => resolve(data));
    });
    expect(garbage).toMatch(/^HTTP\/1\.1 400/);
    const health = await fetch(`${base}/health`);
    expect(health.status).toBe(200);
  });
});

describe("keys, proxies and health over a real socket", () => {
  let proxied: App;
  let proxiedBase: string;
  let stub: Awaited<ReturnType<typeof testApp>>["diagnoser"];
  beforeAll(async () => {
    ({ app: proxied, diagnoser: stub } = await testApp({
      env: {
        API_KEYS: `partner:${hashApiKey("the-right-key")}:100`,
        TRUST_PROXY: "127.0.0.1",
        RATE_LIMIT_HEALTH: "2",
      },
    }));
    proxiedBase = await proxied.listen({ port: 0, host: "127.0.0.1" });
  });
  afterAll(() => proxied.close());

  it("answers an unknown API key with 401, X-Request-ID and WWW-Authenticate", async () => {
    const { payload, headers } = await multipartBody({}, { data: JPEG });
    const res = await fetch(`${proxiedBase}/diagnosis/`, {
      method: "POST",
      body: payload,
      headers: { ...headers, "x-api-key": "a-wrong-key" },
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
    const body = (await res.json()) as { detail: string; request_id: string };
    expect(body.detail).toMatch(/Invalid API key/);
    expect(res.headers.get("x-request-id")).toBe(body.request_id);
    expect(res.headers.get("x-ratelimit-limit")).toBeTruthy();
  });

  it("limits by the X-Forwarded-For client behind a trusted proxy", async () => {
    const health = (client: string) =>
      fetch(`${proxiedBase}/health`, { headers: { "x-forwarded-for": client } });
    const first = await health("203.0.113.7");
    expect(first.status).toBe(200);
    expect(first.headers.get("x-ratelimit-remaining")).toBe("1");
    expect((await health("203.0.113.7")).headers.get("x-ratelimit-remaining")).toBe("0");
    const third = await health("203.0.113.7");
    expect(third.status).toBe(429);
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another client behind the same proxy (same socket address) has its own budget.
    const other = await health("198.51.100.9");
    expect(other.status).toBe(200);
    expect(other.headers.get("x-ratelimit-remaining")).toBe("1");
  });

  it("reports /health degraded while the model is not ready", async () => {
    stub.ready = false;
    try {
      const res = await fetch(`${proxiedBase}/health`, { headers: { "x-forwarded-for": "192.0.2.44" } });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ status: "degraded", checks: { model: "not_ready" } });
    } finally {
      stub.ready = true;
    }
  });
});

describe("graceful close", () => {
  it("finishes an in-flight diagnosis before closing", async () => {
    const { app: slow, diagnoser } = await testApp();
    let release: () => void = () => {};
    const started = new Promise<void>((resolve) => {
      diagnoser.diagnose = async (
        _image: Buffer,
        context: DiagnosisContext,
        requestId: string,
      ): Promise<DiagnosisResult> => {
        resolve();
        await new Promise<void>((r) => {
          release = r;
        });
        return cannedResult(requestId, context.includeBbox);
      };
    });
    const url = await slow.listen({ port: 0, host: "127.0.0.1" });
    const { payload, headers } = await multipartBody({}, { data: JPEG });
    const response = fetch(`${url}/diagnosis/`, { method: "POST", body: payload, headers });
    await started;
    const closed = slow.close();
    release();
    const res = await response;
    expect(res.status).toBe(200);
    await closed;
    await expect(fetch(`${url}/health`)).rejects.toThrow();
  });
});
