// The process's Redis client (src/redis.ts) logs the return of a lost connection once. A connection that comes
// back before any reconnect attempt fails raises no "error" on the way: on a busy machine the worker's client
// went through a whole outage like that and its return was never logged.
import { once } from "node:events";
import { expect, it } from "vitest";
import { createRedis } from "../../src/redis.js";
import { capturedLogger } from "./support/app.js";

it("logs the return of a connection lost and regained without an error in between", async () => {
  const log = capturedLogger();
  const redis = createRedis("redis://127.0.0.1:6379", log.logger, { name: "test-client" });
  try {
    await once(redis, "ready");
    expect(log.lines().filter((l) => l.includes("redis connection restored"))).toHaveLength(0);
    redis.disconnect(true);
    await once(redis, "ready");
    const lines = log.lines();
    expect(lines.filter((l) => l.includes("redis connection restored"))).toHaveLength(1);
    expect(lines.some((l) => l.includes("redis unavailable"))).toBe(false);
  } finally {
    await redis.quit();
  }
});
