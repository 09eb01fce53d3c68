import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { sessionSecret } from "../../src/console/session-secret.js";

const redis = new Redis("redis://127.0.0.1:6379");
const prefix = `test-session-secret-${process.pid}-${Date.now()}:`;
afterAll(async () => {
  await redis.del(`${prefix}console:session-secret`);
  await redis.quit();
});

describe("the session secret when CONSOLE_SESSION_SECRET is not set", () => {
  it("is one for every process on the same Redis, so a session made by one is accepted by the others", async () => {
    const [a, b] = await Promise.all([sessionSecret(redis, prefix), sessionSecret(redis, prefix)]);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(b).toBe(a);
    expect(await sessionSecret(redis, prefix)).toBe(a);
    // Without Redis each process draws its own.
    expect(await sessionSecret(undefined)).not.toBe(await sessionSecret(undefined));
  });
});
