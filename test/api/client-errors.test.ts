import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { capturedLogger, testApp } from "./support/app.js";
import { rawExchange } from "./support/raw-http.js";

// Failures that reach the server below Fastify's routes: a body busboy cannot name, a client too slow or too
// silent, a request Node's parser refuses. Each is answered at once, in the API's error shape.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const REQUEST_TIMEOUT_MS = 2_000;
const IDLE_TIMEOUT_MS = 1_500;

type App = Awaited<ReturnType<typeof testApp>>["app"];
let app: App;
let port: number;
const log = capturedLogger();

beforeAll(async () => {
  ({ app } = await testApp({
    env: { REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS), IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS) },
    logger: log.logger,
  }));
  port = Number(new URL(await app.listen({ port: 0, host: "127.0.0.1" })).port);
});
afterAll(() => app.close());

function expectErrorShape(res: { status: number; headers: Record<string, string>; body: string }) {
  const body = JSON.parse(res.body) as { detail: string; request_id: string };
  expect(Object.keys(body).sort()).toEqual(["detail", "request_id"]);
  expect(body.request_id).toMatch(UUID);
  expect(res.headers["x-request-id"]).toBe(body.request_id);
  return body;
}

function expectRateLimitHeaders(res: { headers: Record<string, string> }) {
  expect(res.headers["x-ratelimit-limit"]).toBe("30");
  expect(Number(res.headers["x-ratelimit-remaining"])).toBeLessThan(30);
  expect(Number(res.headers["x-ratelimit-reset"])).toBeGreaterThan(Date.now() / 1000);
}

function post(body: Buffer | string, contentType: string): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}/diagnosis/`, {
    method: "POST",
    body,
    headers: { "content-type": contentType },
    signal: AbortSignal.timeout(5_000),
  });
}

describe("a multipart part without Content-Disposition", () => {
  // The example: a JPEG-sized part with no name stalled busboy and the request was never answered.
  for (const bytes of [22_000, 70_000, 3_000_000]) {
    it(`of ${bytes} bytes is a 400 at once`, async () => {
      const body = Buffer.concat([
        Buffer.from("--XB\r\nContent-Type: image/jpeg\r\n\r\n"),
        Buffer.alloc(bytes, 0xd8),
        Buffer.from("\r\n--XB--"),
      ]);
      const res = await post(body, "multipart/form-data; boundary=XB");
      expect(res.status).toBe(400);
      const json = (await res.json()) as { detail: string; request_id: string };
      expect(json.detail).toMatch(/Content-Disposition/);
      expect(res.headers.get("x-request-id")).toBe(json.request_id);
    });
  }

  it("is a 400 also beside a well-formed image part, the boundary split across chunks", async () => {
    const boundary = "----formdata-undici-0123456789";
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="a.jpg"\r\n\r\n`),
      Buffer.alloc(65_530, 0xff),
      Buffer.from(`\r\n--${boundary}\r\nContent-Type: text/plain\r\n\r\nhello\r\n--${boundary}--\r\n`),
    ]);
    expect((await post(body, `multipart/form-data; boundary="${boundary}"`)).status).toBe(400);
  });

  it("does not make a form without any field a 400: that is a missing image (422)", async () => {
    const res = await post("--XB--\r\n", "multipart/form-data; boundary=XB");
    expect(res.status).toBe(422);
  });
});

describe("slow and silent clients", () => {
  it("cuts a chunked body that trickles a byte at a time at REQUEST_TIMEOUT_MS, with 408", async () => {
    const res = await rawExchange(port, async (socket) => {
      socket.write(
        "POST /diagnosis/ HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n" +
          "Content-Type: multipart/form-data; boundary=b\r\n\r\n",
      );
      // One byte per chunk, each well inside the idle timeout: only the request timeout can end it.
      for (let i = 0; i < 100 && !socket.destroyed; i++) {
        socket.write("1\r\nx\r\n");
        await new Promise((r) => setTimeout(r, 300));
      }
    });
    expect(res.status).toBe(408);
    expect(expectErrorShape(res).detail).toMatch(/did not arrive in full within 2 seconds/);
    expect(res.ms).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 100);
    expect(res.ms).toBeLessThan(REQUEST_TIMEOUT_MS + 3_000);
    expectRateLimitHeaders(res);
  });

  it("cuts a body that stops arriving at IDLE_TIMEOUT_MS, with 408 and the request's own id", async () => {
    const res = await rawExchange(port, (socket) => {
      socket.write(
        "POST /diagnosis/ HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n" +
          'Content-Type: multipart/form-data; boundary=b\r\n\r\n--b\r\nContent-Disposition: form-data; name="image"; filename="a.jpg"\r\n\r\n\xff\xd8',
      );
    });
    expect(res.status).toBe(408);
    const body = expectErrorShape(res);
    expect(body.detail).toMatch(/stalled for 1.5 seconds/);
    expect(res.ms).toBeLessThan(REQUEST_TIMEOUT_MS);
    // The request was counted against its rate limit, and says so; its log lines carry the same id.
    expectRateLimitHeaders(res);
    expect(log.lines().some((l) => l.includes(body.request_id) && l.includes('"statusCode":408'))).toBe(true);
  });
});

describe("requests Node's HTTP parser refuses", () => {
  it("answers a malformed request line with 400 {detail, request_id} and X-Request-ID", async () => {
    const res = await rawExchange(port, (socket) => {
      socket.write("GARBAGE\r\n\r\n");
    });
    expect(res.status).toBe(400);
    expect(expectErrorShape(res).detail).toMatch(/Malformed HTTP request/);
  });

  it("answers headers over Node's limit with 431 {detail, request_id}", async () => {
    const res = await rawExchange(port, (socket) => {
      socket.write(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`);
    });
    expect(res.status).toBe(431);
    expect(expectErrorShape(res).detail).toMatch(/headers are larger than 16 KB/);
  });

  it("logs each as one JSON line naming the status and Node's code", () => {
    const lines = log.lines().filter((l) => l.includes('"msg":"client error"'));
    expect(lines.some((l) => l.includes('"statusCode":431') && l.includes("HPE_HEADER_OVERFLOW"))).toBe(true);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
  });

  it("keeps serving afterwards", async () => {
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
  });
});
