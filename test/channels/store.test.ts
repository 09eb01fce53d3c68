import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { CODE_ALPHABET, newShortCode, normalizeShortCode } from "../../src/results/short-code.js";
import { createResultStore, RESULT_TTL_SECONDS } from "../../src/results/store.js";
import { resultFixture } from "./support/fixtures.js";

const redis = new Redis("redis://127.0.0.1:6379");
const prefix = `test-store-${process.pid}-${Date.now()}:`;

afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

describe("short codes", () => {
  it("use an alphabet without look-alikes", () => {
    for (const ch of "01OIL") expect(CODE_ALPHABET).not.toContain(ch);
    for (let i = 0; i < 200; i++) expect(newShortCode()).toMatch(/^[23456789ABCDEFGHJKMNPQRSTUVWXYZ]{6}$/);
  });

  it("normalize what farmers type", () => {
    expect(normalizeShortCode("k7m 4qx")).toBe("K7M4QX");
    expect(normalizeShortCode("K7M-4QX")).toBe("K7M4QX");
    expect(normalizeShortCode("K7M4Q0")).toBeUndefined();
    expect(normalizeShortCode("HELP")).toBeUndefined();
  });
});

describe("result store on Redis", () => {
  const store = createResultStore(redis, { prefix });

  it("keeps a result 30 days under its request_id, its code and its owner", async () => {
    const result = resultFixture();
    const saved = await store.save({ result, language: "sw", owner: "+254712345678" });
    expect((await store.get(result.request_id))?.code).toBe(saved.code);
    expect((await store.getByCode(saved.code))?.result.request_id).toBe(result.request_id);
    expect((await store.lastFor("+254712345678"))?.result.request_id).toBe(result.request_id);
    for (const key of [`result:${result.request_id}`, `code:${saved.code}`, "last:+254712345678"]) {
      const ttl = await redis.ttl(`${prefix}${key}`);
      expect(ttl).toBeGreaterThan(RESULT_TTL_SECONDS - 60);
      expect(ttl).toBeLessThanOrEqual(RESULT_TTL_SECONDS);
    }
  });

  it("keeps the first code when the same request is saved again (a retried job)", async () => {
    const result = resultFixture();
    const first = await store.save({ result, language: "en" });
    const second = await store.save({ result, language: "en" });
    expect(second.code).toBe(first.code);
  });

  it("never hands out a code twice", async () => {
    const codes = new Set<string>();
    for (let i = 0; i < 50; i++)
      codes.add((await store.save({ result: resultFixture(), language: "en" })).code);
    expect(codes.size).toBe(50);
  });
});

describe("result store in memory (no REDIS_URL)", () => {
  it("is bounded, dropping the least recently used", async () => {
    const store = createResultStore(undefined, { maxEntries: 3 });
    const saved = [];
    for (let i = 0; i < 3; i++)
      saved.push(await store.save({ result: resultFixture(), language: "en", owner: `o${i}` }));
    await store.get(saved[0]!.result.request_id);
    await store.save({ result: resultFixture(), language: "en" });
    expect(await store.get(saved[1]!.result.request_id)).toBeUndefined();
    expect(await store.getByCode(saved[1]!.code)).toBeUndefined();
    expect(await store.lastFor("o1")).toBeUndefined();
    expect((await store.getByCode(saved[0]!.code))?.owner).toBe("o0");
  });

  it("forgets expired results", async () => {
    const store = createResultStore(undefined, { ttlSeconds: -1 });
    const saved = await store.save({ result: resultFixture(), language: "en" });
    expect(await store.getByCode(saved.code)).toBeUndefined();
  });
});
