// A farmer's "delete everything about me": their results, photos, codes, messages and labelled examples go;
// another farmer's stay. On the real Redis and on the in-memory stores of a service without it.
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { forgetFarmer } from "../../src/results/forget.js";
import { createRecords, type Records } from "../../src/results/records.js";
import { resultFixture } from "../channels/support/fixtures.js";
import { leafJpeg } from "../diagnosis/fixtures.js";

const redis = new Redis("redis://127.0.0.1:6379");
const prefix = `test-forget-${process.pid}-${Date.now()}:`;
afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

const FARMER = "+254700123456";
const NEIGHBOUR = "+254700654321";

async function keptFor(records: Records, owner: string) {
  const unsure = resultFixture({ outcome: "unsure", crop_health: "unknown", diagnoses: [] });
  const photo = await leafJpeg();
  const first = await records.record(resultFixture(), { language: "sw", owner, source: "whatsapp", photo });
  const second = await records.record(unsure, { language: "sw", owner, source: "whatsapp", photo });
  await records.sent.add(owner, {
    at: new Date().toISOString(),
    channel: "whatsapp",
    text: "Kutu.",
    ok: true,
  });
  const example = {
    id: first.result.request_id,
    code: first.code,
    label: "maize__common_rust",
    source: "whatsapp" as const,
    region: "KE",
    takenAt: first.createdAt,
    decision: "confirmed" as const,
    officer: "amina",
    decidedAt: first.createdAt,
    consent: { basis: "informed_no_objection" as const, at: first.createdAt },
    modelOutcome: "diagnosed",
  };
  await records.examples.save(example, { data: photo, type: "image/jpeg" }, owner);
  return [first, second];
}

describe.each([
  ["Redis", () => createRecords(redis, { prefix }), true],
  ["memory", () => createRecords(undefined), false],
])("forgetting a farmer (%s)", (_name, make, isRedis) => {
  it("deletes their results, photos, codes, messages and examples, and nobody else's", async () => {
    const records = make();
    const theirs = await keptFor(records, FARMER);
    const neighbours = await keptFor(records, NEIGHBOUR);
    expect((await records.reviews.list()).map((c) => c.stored.owner)).toContain(FARMER);

    await records.store.setShown(FARMER, theirs[0]!.result.request_id);
    await records.consent.inform(FARMER);
    const queued = await records.reviews.count();
    expect(await forgetFarmer(records, FARMER)).toEqual({ results: 2, examples: 1 });
    expect(await records.store.shownFor(FARMER)).toBeUndefined();
    expect(await records.consent.get(FARMER)).toBeUndefined();
    // Their unsure photo's case left the queue at once (not at the next page's read).
    expect(await records.reviews.count()).toBe(queued - 1);
    if (isRedis) {
      // Nothing under this prefix names them, nor any of their results.
      const left = await redis.keys(`${prefix}*`);
      const theirIds = theirs.flatMap((r) => [r.result.request_id, r.code]);
      expect(left.filter((k) => k.includes(FARMER) || theirIds.some((id) => k.endsWith(id)))).toEqual([]);
    }

    for (const stored of theirs) {
      expect(await records.store.get(stored.result.request_id)).toBeUndefined();
      expect(await records.store.getByCode(stored.code)).toBeUndefined();
      expect(await records.photos.get(stored.result.request_id)).toBeUndefined();
      expect(await records.examples.get(stored.result.request_id)).toBeUndefined();
    }
    expect(await records.store.listFor(FARMER)).toEqual([]);
    expect(await records.store.lastFor(FARMER)).toBeUndefined();
    expect(await records.sent.list(FARMER)).toEqual([]);
    expect((await records.reviews.list()).map((c) => c.stored.owner)).not.toContain(FARMER);

    for (const stored of neighbours) {
      expect(await records.store.getByCode(stored.code)).toBeDefined();
      expect(await records.photos.get(stored.result.request_id)).toBeDefined();
    }
    expect(await records.sent.list(NEIGHBOUR)).toHaveLength(1);
    expect(await records.examples.get(neighbours[0]!.result.request_id)).toBeDefined();
    expect(await forgetFarmer(records, FARMER)).toEqual({ results: 0, examples: 0 });
  });

  it("keeps a refusal to keep photos, so it goes on being honoured", async () => {
    const records = make();
    await keptFor(records, FARMER);
    await records.consent.set(FARMER, "refused");
    await forgetFarmer(records, FARMER);
    expect((await records.consent.get(FARMER))?.status).toBe("refused");
  });
});
