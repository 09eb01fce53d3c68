// Opening a case's page renews a claim; it never takes a case (the queue's Answer button does), on the real
// Redis and on the in-memory queue of a service without it.
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { createRecords } from "../../src/results/records.js";
import { resultFixture } from "../channels/support/fixtures.js";

const redis = new Redis("redis://127.0.0.1:6379");
const prefix = `test-claims-${process.pid}-${Date.now()}:`;
afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

describe.each([
  ["Redis", () => createRecords(redis, { prefix })],
  ["memory", () => createRecords(undefined)],
])("renewing a claim by opening the case (%s)", (_name, make) => {
  it("renews the holder's claim, or a lapsed one nobody took since, and takes nothing else", async () => {
    const records = make();
    const unsure = resultFixture({ outcome: "unsure", crop_health: "unknown", diagnoses: [] });
    const stored = await records.record(unsure, {
      language: "en",
      owner: "+254700123456",
      source: "whatsapp",
    });
    const id = stored.result.request_id;
    expect(await records.reviews.renew(id, "amina")).toEqual({ ok: false, by: null });
    expect(await records.reviews.holder(id)).toBeUndefined();
    expect(await records.reviews.claim(id, "amina")).toEqual({ ok: true });
    expect(await records.reviews.renew(id, "amina")).toEqual({ ok: true });
    expect(await records.reviews.renew(id, "baraka")).toEqual({ ok: false, by: "amina" });
  });
});
