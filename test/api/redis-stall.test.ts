// A Redis that keeps the connection open but stops answering (a stalled server, a half-open connection) must
// not hold requests at their rate limit: past RATE_LIMIT_REDIS_WAIT_MS the request is limited per instance, as
// with an unreachable Redis. The stall is a loopback proxy in front of the real Redis
// that stops forwarding, so only this test's connection is stalled.
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { connect, createServer, type Socket } from "node:net";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RATE_LIMIT_REDIS_WAIT_MS } from "../../src/limits.js";
import { createRedis, untilReady } from "../../src/redis.js";
import { until } from "../channels/support/wait.js";
import { capturedLogger, testApp } from "./support/app.js";

// While stalled the proxy holds what either side sends, as a Redis busy with a long command holds its clients'.
let stalled = false;
const held: (() => void)[] = [];
function resume() {
  stalled = false;
  for (const write of held.splice(0)) write();
}
const sockets: Socket[] = [];
const proxy = createServer((client) => {
  const upstream = connect(6379, "127.0.0.1");
  sockets.push(client, upstream);
  const forward = (to: Socket) => (chunk: Buffer) => {
    if (stalled) held.push(() => to.write(chunk));
    else to.write(chunk);
  };
  client.on("data", forward(upstream));
  upstream.on("data", forward(client));
  const end = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on("close", end);
  upstream.on("close", end);
  client.on("error", end);
  upstream.on("error", end);
});

let redis: Redis;
let app: Awaited<ReturnType<typeof testApp>>["app"];
const { logger, lines } = capturedLogger();

beforeAll(async () => {
  proxy.listen(0, "127.0.0.1");
  await once(proxy, "listening");
  const url = `redis://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  redis = createRedis(url, logger, { name: "stall-test" });
  if (!(await untilReady(redis, 5_000))) throw new Error("Redis is not answering on 127.0.0.1:6379");
  ({ app } = await testApp({
    env: { REDIS_URL: url, RATE_LIMIT_HEALTH: "3" },
    deps: { redis },
    rateLimitKeyPrefix: `stall-${randomUUID()}`,
    logger,
  }));
});
afterAll(async () => {
  await app?.close();
  redis?.disconnect();
  for (const socket of sockets) socket.destroy();
  proxy.close();
});

describe("a Redis that stops answering", () => {
  it("answers with the per-instance limit after the wait instead of hanging", async () => {
    const before = await app.inject({ method: "GET", url: "/health", remoteAddress: "10.9.0.1" });
    expect(before.statusCode).toBe(200);
    expect(before.headers["x-ratelimit-remaining"]).toBe("2");

    stalled = true;
    const started = performance.now();
    const during = await app.inject({ method: "GET", url: "/health", remoteAddress: "10.9.0.1" });
    expect(during.statusCode).toBe(200);
    expect(during.headers["x-ratelimit-limit"]).toBe("3");
    expect(performance.now() - started).toBeGreaterThanOrEqual(RATE_LIMIT_REDIS_WAIT_MS - 50);
    expect(lines().join("\n")).toMatch(/rate limits are per instance while Redis is unavailable/);

    // The stall ends without a reconnect: what was counted here goes to Redis, and the outage is over (the next
    // one is logged again).
    resume();
    await until(
      () => lines().some((l) => l.includes("Redis is back: requests counted per instance")),
      "the outage ledger replayed",
      10_000,
    );
  }, 15_000);
});
