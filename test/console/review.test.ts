import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import sharp from "sharp";
import { afterAll, describe, expect, it } from "vitest";
import { CLAIM_SECONDS, SETTLE_AFTER_MS, SURGE_MIN_COUNT } from "../../src/limits.js";
import { outbreakReport } from "../../src/outbreaks/report.js";
import { isoWeek } from "../../src/outbreaks/weeks.js";
import { forgetFarmer } from "../../src/results/forget.js";
import { createRecords } from "../../src/results/records.js";
import type { Decision } from "../../src/results/types.js";
import { answerCase, settleAnswers } from "../../src/review/answer.js";
import { exportDataset, MANIFEST_COLUMNS } from "../../src/review/export.js";
import { EXAMPLE_PHOTO, labelledExample, resultFixture } from "../channels/support/fixtures.js";

const redis = new Redis("redis://127.0.0.1:6379");
const prefix = `test-review-${process.pid}-${Date.now()}:`;
const records = createRecords(redis, { prefix });
const isHealthy = (id: string) => id.endsWith("__healthy");
const dirs: string[] = [];

afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

const photo = () =>
  sharp({ create: { width: 1600, height: 1200, channels: 3, background: { r: 60, g: 140, b: 50 } } })
    .jpeg()
    .toBuffer();
const unsure = () => resultFixture({ outcome: "unsure", diagnoses: [], crop_health: "unknown" });
/** The officer's answer to a case, made now. */
const answerAs = (officer: string, id: string, decision: Omit<Decision, "officer" | "at">) =>
  answerCase({ records, isHealthy }, id, { ...decision, officer, at: new Date().toISOString() });

describe("the review queue", () => {
  it("queues what the model could not answer well, oldest first, and nothing else", async () => {
    const first = await records.record(unsure(), { language: "sw", source: "telegram", owner: "tg:1" });
    const notCovered = await records.record(
      resultFixture({ outcome: "crop_not_supported", diagnoses: [], candidates: [] }),
      {
        language: "en",
        source: "api",
      },
    );
    const low = resultFixture();
    low.diagnoses[0]!.confidence = 0.41;
    const lowStored = await records.record(low, {
      language: "fr",
      source: "whatsapp",
      owner: "+33612345678",
    });
    await records.record(resultFixture(), { language: "en", source: "api" });
    const open = await records.reviews.list();
    expect(open.map((c) => c.stored.result.request_id)).toEqual([
      first.result.request_id,
      notCovered.result.request_id,
      lowStored.result.request_id,
    ]);
    expect(open.map((c) => c.stored.review?.reasons)).toEqual([
      ["unsure"],
      ["crop_not_supported"],
      ["low_confidence"],
    ]);
  });

  it("lets one officer at a time hold a case; the claim expires", async () => {
    const stored = await records.record(unsure(), { language: "sw", source: "telegram", owner: "tg:2" });
    const id = stored.result.request_id;
    expect(await records.reviews.claim(id, "amina")).toEqual({ ok: true });
    expect(await records.reviews.claim(id, "baraka")).toEqual({ ok: false, by: "amina" });
    // Baraka cannot answer a case Amina holds.
    const refused = await records.reviews.decide(id, {
      kind: "answered",
      diagnosis: "x",
      advice: "y",
      officer: "baraka",
      at: "",
    });
    expect(refused).toBe("not_claimed");
    const ttl = await redis.ttl(`${prefix}review:claim:${id}`);
    expect(ttl).toBeGreaterThan(CLAIM_SECONDS - 5);
    expect(ttl).toBeLessThanOrEqual(CLAIM_SECONDS);
    // The claim lapses (as if CLAIM_SECONDS passed): Baraka may take it, and Amina's late answer is refused.
    await redis.del(`${prefix}review:claim:${id}`);
    expect(await records.reviews.claim(id, "baraka")).toEqual({ ok: true });
    const late = await answerCase({ records, isHealthy }, id, {
      kind: "answered",
      diagnosis: "x",
      advice: "y",
      officer: "amina",
      at: "",
    });
    expect(late.status).toBe("not_claimed");
  });

  it("takes the answer of an officer whose claim lapsed while nobody else took the case", async () => {
    const stored = await records.record(unsure(), { language: "sw", source: "telegram", owner: "tg:6" });
    const id = stored.result.request_id;
    expect(await records.reviews.claim(id, "amina")).toEqual({ ok: true });
    // A long answer: her claim lapses (as if CLAIM_SECONDS passed) before she sends it.
    await redis.del(`${prefix}review:claim:${id}`);
    const slow = await answerAs("amina", id, {
      kind: "answered",
      diagnosis: "Nitrogen deficiency",
      advice: "Top-dress with CAN.",
    });
    expect(slow.status).toBe("done");
    expect((await records.store.get(id))?.review?.decision?.officer).toBe("amina");
  });

  it("takes no answer from an officer who gave the case back, nor from one who never claimed it", async () => {
    const stored = await records.record(unsure(), { language: "sw", source: "telegram", owner: "tg:7" });
    const id = stored.result.request_id;
    const answer = (officer: string) =>
      answerAs(officer, id, { kind: "answered", diagnosis: "x", advice: "y" });
    expect(await records.reviews.claim(id, "amina")).toEqual({ ok: true });
    await records.reviews.release(id, "amina");
    // Her page is still open: she sends it anyway.
    expect((await answer("amina")).status).toBe("not_claimed");
    expect((await answer("baraka")).status).toBe("not_claimed");
    expect((await records.reviews.list()).map((c) => c.stored.result.request_id)).toContain(id);
  });

  it("lets no second officer answer a case already answered, whatever claim they hold", async () => {
    const stored = await records.record(unsure(), { language: "sw", source: "telegram", owner: "tg:5" });
    const id = stored.result.request_id;
    expect(await records.reviews.claim(id, "amina")).toEqual({ ok: true });
    const answer = (officer: string) =>
      answerAs(officer, id, { kind: "answered", diagnosis: `${officer}'s answer`, advice: "y" });
    expect((await answer("amina")).status).toBe("done");
    // Baraka's claim landed as Amina's answer closed the case (his look at the case came just before it).
    await redis.set(`${prefix}review:claim:${id}`, "baraka");
    expect((await answer("baraka")).status).toBe("not_claimed");
    const decision = (await records.store.get(id))?.review?.decision;
    expect(decision).toMatchObject({ officer: "amina", diagnosis: "amina's answer" });
  });

  it("records a correction: leaves the queue, moves the outbreak count, keeps the photo only with consent", async () => {
    await records.consent.inform("tg:3");
    const agreed = await records.record(unsure(), {
      language: "sw",
      source: "telegram",
      owner: "tg:3",
      photo: await photo(),
      region: "Kenya",
    });
    await records.consent.set("tg:4", "refused");
    const refused = await records.record(unsure(), {
      language: "sw",
      source: "telegram",
      owner: "tg:4",
      photo: await photo(),
    });
    const enqueued: string[] = [];
    for (const [stored, officer] of [
      [agreed, "amina"],
      [refused, "amina"],
    ] as const) {
      const id = stored.result.request_id;
      await records.reviews.claim(id, officer);
      const outcome = await answerCase(
        { records, isHealthy, enqueueAnswer: async (requestId) => void enqueued.push(requestId) },
        id,
        { kind: "corrected", classId: "tomato__early_blight", officer, at: new Date().toISOString() },
      );
      expect(outcome.status).toBe("done");
    }
    expect(enqueued).toEqual([]);
    const ids = (await records.reviews.list()).map((c) => c.stored.result.request_id);
    expect(ids).not.toContain(agreed.result.request_id);
    expect((await records.store.get(agreed.result.request_id))?.review?.decision?.classId).toBe(
      "tomato__early_blight",
    );
    expect((await records.examples.list()).map((e) => e.id)).toEqual([agreed.result.request_id]);
    const week = isoWeek(new Date(agreed.createdAt));
    const counts = await records.outbreaks.read([week]);
    expect(counts.get(week)?.get("KE\ttomato__early_blight")).toBe(1);
  });

  it("keeps no photo of a farmer who refused, even when staff ticked 'the farmer agrees' for it", async () => {
    await records.consent.set("+254700000555", "refused");
    const onThePhone = await records.record(unsure(), {
      language: "en",
      source: "console",
      owner: "+254700000555",
      photo: await photo(),
      consent: { basis: "staff_recorded", at: new Date().toISOString() },
    });
    const id = onThePhone.result.request_id;
    await records.reviews.claim(id, "amina");
    const outcome = await answerAs("amina", id, { kind: "corrected", classId: "tomato__early_blight" });
    expect(outcome).toMatchObject({ status: "done", kept: false });
    expect((await records.examples.list()).map((e) => e.id)).not.toContain(id);
  });

  it("makes the answered result the farmer's latest, also for a photo the model could not answer", async () => {
    const diagnosed = await records.record(resultFixture(), {
      language: "sw",
      source: "sms",
      owner: "+254700000777",
    });
    const unsureOne = await records.record(unsure(), {
      language: "sw",
      source: "sms",
      owner: "+254700000777",
    });
    expect((await records.store.lastFor("+254700000777"))?.code).toBe(diagnosed.code);
    const id = unsureOne.result.request_id;
    await records.reviews.claim(id, "amina");
    await answerAs("amina", id, { kind: "corrected", classId: "maize__common_rust" });
    expect((await records.store.lastFor("+254700000777"))?.code).toBe(unsureOne.code);
  });

  /**
   * A Telegram farmer's unsure case, answered with a class by Amina while `meanwhile` runs between the reads the
   * answer makes and the example's save: the outcome and the case's id.
   */
  async function answeredWhile(owner: string, meanwhile: () => Promise<unknown>) {
    await records.consent.inform(owner);
    const stored = await records.record(unsure(), {
      language: "sw",
      source: "telegram",
      owner,
      photo: await photo(),
    });
    const id = stored.result.request_id;
    await records.reviews.claim(id, "amina");
    const save = records.examples.save;
    records.examples.save = async (...args) => {
      await meanwhile();
      return save(...args);
    };
    try {
      return {
        id,
        outcome: await answerAs("amina", id, { kind: "corrected", classId: "tomato__early_blight" }),
      };
    } finally {
      records.examples.save = save;
    }
  }

  it("keeps no example of a farmer who refused while the officer's answer was being saved", async () => {
    // The farmer's refusal (recorded, their examples deleted) lands between the consent read and the save.
    const { id, outcome } = await answeredWhile("tg:10", async () => {
      await records.consent.set("tg:10", "refused");
      await records.examples.deleteOwner("tg:10");
    });
    expect(outcome).toMatchObject({ status: "done", kept: false });
    expect(await records.examples.get(id)).toBeUndefined();
  });

  it("keeps no example, and no 'last' key, of a farmer whose data was deleted while the answer was being saved", async () => {
    // The farmer's "delete everything" lands between the photo's read and the example's save.
    const { id, outcome } = await answeredWhile("tg:11", () => forgetFarmer(records, "tg:11"));
    expect(outcome).toMatchObject({ status: "done", kept: false });
    expect(await records.examples.get(id)).toBeUndefined();
    expect(await redis.exists(`${prefix}last:tg:11`)).toBe(0);
  });

  it("finishes an answer whose follow-up failed part-way, once: the message, the example, the count", async () => {
    // Records of its own: the export below counts every example kept in `records`.
    const records = createRecords(redis, { prefix: `${prefix}settle:` });
    await records.consent.inform("tg:20");
    const stored = await records.record(unsure(), {
      language: "sw",
      source: "telegram",
      owner: "tg:20",
      photo: await photo(),
      region: "Uganda",
      replyTo: { provider: "telegram", channel: "telegram", to: "20" },
    });
    const id = stored.result.request_id;
    const week = isoWeek(new Date(stored.createdAt));
    const count = async () => (await records.outbreaks.read([week])).get(week)?.get("UG\tmaize__common_rust");
    await records.reviews.claim(id, "amina");
    const enqueued: string[] = [];
    let queueDown = true;
    const deps = {
      records,
      isHealthy,
      enqueueAnswer: async (requestId: string) => {
        if (queueDown) throw new Error("Connection is closed.");
        enqueued.push(requestId);
      },
    };
    const decision = {
      kind: "corrected",
      classId: "maize__common_rust",
      officer: "amina",
      at: new Date().toISOString(),
    } as const;
    expect(await answerCase(deps, id, decision)).toEqual({ status: "settling" });
    // The case has left the queue, and its answer waits to be finished; a farmer's "wrong" does not reopen it.
    await records.reviews.add(stored, "farmer_said_wrong");
    expect((await records.reviews.list()).map((c) => c.stored.result.request_id)).not.toContain(id);
    expect((await records.reviews.unsettled()).map((u) => u.requestId)).toEqual([id]);
    expect(await count()).toBe(1);

    queueDown = false;
    const later = Date.now() + SETTLE_AFTER_MS;
    // Just made: the request that made it is still finishing it.
    expect(await settleAnswers(deps)).toBe(0);
    // Another process holds the follow-up: nothing is done twice meanwhile.
    const held = await records.reviews.leaseSettling(id);
    expect(held).toBeDefined();
    expect(await settleAnswers(deps, later)).toBe(0);
    await records.reviews.releaseSettling(id, held!);
    expect(await settleAnswers(deps, later)).toBe(1);
    expect(enqueued).toEqual([id]);
    expect((await records.examples.get(id))?.label).toBe("maize__common_rust");
    expect(await count()).toBe(1);
    expect((await records.store.lastFor("tg:20"))?.code).toBe(stored.code);
    expect(await records.reviews.unsettled()).toEqual([]);
    // Settled: a round that listed it before is not given it again.
    expect(await records.reviews.leaseSettling(id)).toBeUndefined();
    expect(await settleAnswers(deps, later)).toBe(0);
    expect(enqueued).toEqual([id]);
  });

  it("moves an outbreak count once per result, both sides together, however often it is asked", async () => {
    const week = isoWeek(new Date());
    const read = async () => (await records.outbreaks.read([week])).get(week);
    await records.outbreaks.add(week, "TZ", "maize__common_rust", 1);
    for (let i = 0; i < 3; i++)
      await records.outbreaks.moveOnce(
        week,
        "TZ",
        { from: "maize__common_rust", to: "maize__gray_leaf_spot" },
        "r-1",
      );
    expect((await read())?.get("TZ\tmaize__common_rust")).toBeUndefined();
    expect((await read())?.get("TZ\tmaize__gray_leaf_spot")).toBe(1);
  });

  it("deletes a farmer's examples on their refusal, counting only those still kept", async () => {
    await records.examples.save(labelledExample({ id: "owner-9-a" }), EXAMPLE_PHOTO, "tg:9");
    await records.examples.save(labelledExample({ id: "owner-9-b" }), EXAMPLE_PHOTO, "tg:9");
    expect(await records.examples.delete("owner-9-a")).toBe(true);
    expect(await records.examples.deleteOwner("tg:9")).toBe(1);
    expect(await records.examples.get("owner-9-b")).toBeUndefined();
    expect(await records.examples.deleteOwner("tg:9")).toBe(0);
  });

  it("exports the kept photos in the shared datasets' layout", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "export-"));
    dirs.push(dir);
    const summary = await exportDataset(records.examples, dir);
    expect(summary).toMatchObject({ photos: 1, classes: { tomato__early_blight: 1 }, skipped: [] });
    expect((await readdir(dir)).sort()).toEqual(["manifest.csv", "tomato__early_blight"]);
    const [header, row] = (await readFile(path.join(dir, "manifest.csv"), "utf8")).trim().split("\n");
    expect(header).toBe(MANIFEST_COLUMNS.join(","));
    const fields = Object.fromEntries(MANIFEST_COLUMNS.map((c, i) => [c, row!.split(",")[i]]));
    expect(fields).toMatchObject({
      label: "tomato__early_blight",
      crop: "tomato",
      condition: "early_blight",
      source_channel: "telegram",
      region: "KE",
      officer_decision: "corrected",
      officer: "amina",
      consent: "informed_no_objection",
      model_outcome: "unsure",
    });
    const image = await sharp(path.join(dir, fields.file!)).metadata();
    expect([image.width, image.height]).toEqual([1000, 750]);
    expect([fields.width, fields.height]).toEqual(["1000", "750"]);
    await expect(exportDataset(records.examples, dir)).rejects.toThrow(/not empty/);
  });
});

describe("the outbreak view", () => {
  it("flags a surge: this week at least twice the mean of the four before, with a minimum count", async () => {
    const now = new Date("2026-11-25T12:00:00Z");
    const weekAgo = (n: number) => isoWeek(new Date(now.getTime() - n * 7 * 86_400_000));
    const counts = createRecords(undefined).outbreaks;
    for (const [n, c] of [
      [4, 1],
      [3, 2],
      [2, 1],
      [1, 2],
      [0, 6],
    ] as const)
      await counts.add(weekAgo(n), "KE", "maize__common_rust", c);
    for (const [n, c] of [
      [1, 4],
      [0, 4],
    ] as const)
      await counts.add(weekAgo(n), "TZ", "maize__common_rust", c);
    await counts.add(weekAgo(0), "UG", "bean__rust", SURGE_MIN_COUNT - 1);
    const report = await outbreakReport(counts, { now, weeks: 8 });
    const row = (region: string) => report.rows.find((r) => r.region === region)!;
    expect(row("KE")).toMatchObject({ thisWeek: 6, baseline: 1.5, surge: true });
    expect(row("TZ")).toMatchObject({ thisWeek: 4, baseline: 1, surge: false });
    expect(row("UG")).toMatchObject({ thisWeek: SURGE_MIN_COUNT - 1, baseline: 0, surge: false });
    expect(report.rows[0]?.region).toBe("KE");
    expect(report.weeks).toHaveLength(8);
    expect(report.series.find((s) => s.disease === "maize__common_rust")?.counts.at(-1)).toBe(10);
    const kenya = await outbreakReport(counts, { now, weeks: 8, region: "KE" });
    expect(kenya.rows.map((r) => r.region)).toEqual(["KE"]);
  });
});
