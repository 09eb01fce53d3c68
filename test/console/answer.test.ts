import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANSWER_MAX_CHARS, CLAIM_SECONDS, SETTLE_AFTER_MS, SETTLE_WITHIN_MINUTES } from "../../src/limits.js";
import type { Decision } from "../../src/results/types.js";
import { answerCase, settleAnswers } from "../../src/review/answer.js";
import { resultFixture } from "../channels/support/fixtures.js";
import { type ConsoleTestApp, consoleTestApp, Visitor } from "./support.js";

const PASSWORD = "correct horse battery staple";
let t: ConsoleTestApp;
let queueDown = true;
const enqueued: string[] = [];

beforeAll(async () => {
  t = await consoleTestApp("answer", {
    enqueueAnswer: async (requestId) => {
      if (queueDown) throw new Error("Connection is closed.");
      enqueued.push(requestId);
    },
  });
  await t.addStaff("amina", PASSWORD);
}, 60_000);
afterAll(() => t?.close());

/** A result the model was unsure of, in the review queue. */
const unsureCase = (meta: Parameters<ConsoleTestApp["records"]["record"]>[1]) =>
  t.records.record(resultFixture({ outcome: "unsure", diagnoses: [], crop_health: "unknown" }), meta);

/** An officer, signed in, who claimed the case and has its answer page open. */
async function openedBy(officer: string, id: string): Promise<Visitor> {
  const v = new Visitor(t.app);
  await v.signIn(officer, PASSWORD);
  await v.get("/console/review");
  expect((await v.post(`/console/review/${id}/claim`, {})).statusCode).toBe(303);
  await v.get(`/console/review/${id}`);
  return v;
}

/** The Redis key of the case's claim. */
const claimKey = async (id: string) => (await t.redis.keys(`test-console-answer-*review:claim:${id}`))[0]!;

describe("opening a case by its address", () => {
  it("takes nothing: a case is taken by the queue's Answer button (a POST), then its page renews the claim", async () => {
    const stored = await unsureCase({ language: "en", source: "whatsapp" });
    const id = stored.result.request_id;
    const v = new Visitor(t.app);
    await v.signIn("amina", PASSWORD);
    const followed = await v.get(`/console/review/${id}`);
    expect(followed.statusCode).toBe(303);
    expect(followed.headers.location).toBe("/console/review");
    expect(await t.records.reviews.holder(id)).toBeUndefined();
    expect((await v.get("/console/review")).body).toContain("Press Answer in the queue to take this case.");
    expect((await v.post(`/console/review/${id}/claim`, {})).statusCode).toBe(303);
    expect((await v.get(`/console/review/${id}`)).statusCode).toBe(200);
    expect(await t.records.reviews.holder(id)).toBe("amina");
    // Her claim lapses while nobody takes the case: reloading the page renews it (her answer would count).
    await t.redis.del(await claimKey(id));
    expect((await v.get(`/console/review/${id}`)).statusCode).toBe(200);
    expect(await t.records.reviews.holder(id)).toBe("amina");
    // A colleague following the link is told who has it, and takes nothing.
    await t.addStaff("chiku", PASSWORD);
    const colleague = new Visitor(t.app);
    await colleague.signIn("chiku", PASSWORD);
    expect((await colleague.get(`/console/review/${id}`)).statusCode).toBe(303);
    expect((await colleague.get("/console/review")).body).toContain("amina is already answering this case.");
    expect(await t.records.reviews.holder(id)).toBe("amina");
  });
});

describe("an officer's answer the console refuses", () => {
  it("comes back with what they typed, and the case stays theirs", async () => {
    const stored = await unsureCase({ language: "en", source: "sms", owner: "+254700000123" });
    const id = stored.result.request_id;
    const v = await openedBy("amina", id);
    // The claim nearly lapsed while she typed; the advice is missing.
    await t.redis.expire(await claimKey(id), 5);
    const refused = await v.post(`/console/review/${id}/answer`, {
      kind: "answered",
      diagnosis: "Nitrogen deficiency <older leaves yellow>",
    });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('value="Nitrogen deficiency &lt;older leaves yellow&gt;"');
    expect(refused.body).toMatch(/<input type="radio" name="kind" value="answered" checked/);
    // Its language switch comes back to the case, not to the form's address (a 404 for a GET).
    expect(refused.body).toContain(`name="next" value="/console/review/${id}"`);
    const ttl = await t.redis.ttl(await claimKey(id));
    expect(ttl).toBeGreaterThan(CLAIM_SECONDS - 5);

    const advice = "Top-dress with CAN.\nWater after.";
    const again = await v.post(`/console/review/${id}/answer`, { kind: "corrected", advice });
    expect(again.statusCode).toBe(422);
    expect(again.body).toContain(`>${advice}</textarea>`);
    expect(again.body).toMatch(/<input type="radio" name="kind" value="corrected" checked/);
  });
});

describe("an officer's answer at the longest the browser lets through", () => {
  it("counts each line break as one character, as the browser did (it sends CR LF)", async () => {
    const stored = await unsureCase({ language: "en", source: "api" });
    const id = stored.result.request_id;
    const v = await openedBy("amina", id);
    const lines = Array.from({ length: 6 }, (_, i) => `${i}`.repeat(ANSWER_MAX_CHARS.advice / 6 - 1));
    const sent = await v.post(`/console/review/${id}/answer`, {
      kind: "answered",
      diagnosis: "Nitrogen deficiency",
      advice: lines.join("\r\n"),
    });
    expect(sent.statusCode).toBe(303);
    // A partner's result: nothing to queue for a farmer, so it is settled at once.
    expect((await t.records.store.get(id))?.review?.decision?.advice).toBe(lines.join("\n"));
  });
});

describe("an officer's answer whose message to the farmer cannot be queued yet", () => {
  it("is saved, the officer is told it is being passed on, and it reaches the queue once it answers", async () => {
    const stored = await unsureCase({
      language: "sw",
      source: "telegram",
      owner: "tg:7001",
      replyTo: { provider: "telegram", channel: "telegram", to: "7001" },
    });
    const id = stored.result.request_id;
    const v = await openedBy("amina", id);
    const answered = await v.post(`/console/review/${id}/answer`, {
      kind: "corrected",
      class_id: "maize__common_rust",
    });
    expect(answered.statusCode).toBe(303);
    const queuePage = await v.get("/console/review");
    expect(queuePage.body).toContain(
      `Answer saved. Sending it to the farmer and updating the outbreak map did not finish; it is retried automatically within ${SETTLE_WITHIN_MINUTES} minutes.`,
    );
    expect(queuePage.body).not.toContain(stored.code);
    expect(enqueued).toEqual([]);

    queueDown = false;
    await settleAnswers(
      {
        records: t.records,
        isHealthy: () => false,
        enqueueAnswer: async (requestId) => void enqueued.push(requestId),
      },
      Date.now() + SETTLE_AFTER_MS,
    );
    expect(enqueued).toEqual([id]);
    expect((await t.records.store.get(id))?.review?.decision?.classId).toBe("maize__common_rust");
  });
});

describe("the case page of an answered case", () => {
  it("shows the officer's answer as the case's diagnosis, and no treatment for a reading they set aside", async () => {
    const v = new Visitor(t.app);
    await v.signIn("amina", PASSWORD);
    const answer = async (decision: Omit<Decision, "officer" | "at">) => {
      const stored = await t.records.record(resultFixture(), { language: "en", source: "api" });
      const id = stored.result.request_id;
      await t.records.reviews.add(stored, "farmer_said_wrong");
      await t.records.reviews.claim(id, "amina");
      const done = await answerCase({ records: t.records, isHealthy: () => false }, id, {
        ...decision,
        officer: "amina",
        at: new Date().toISOString(),
      });
      expect(done.status).toBe("done");
      return (await v.get(`/console/cases/${stored.code}`)).body;
    };
    const model = resultFixture().diagnoses[0]!;
    const own = await answer({
      kind: "answered",
      diagnosis: "Nitrogen deficiency",
      advice: "Top-dress with CAN.",
    });
    expect(own).toMatch(/<h1>.*Nitrogen deficiency.*<\/h1>/s);
    expect(own).not.toContain(`${model.name} ·`);
    expect(own).not.toContain(">Treatment</h2>");
    const corrected = await answer({ kind: "corrected", classId: "maize__common_rust" });
    expect(corrected).toMatch(/<h1>.*Maize common rust.*<\/h1>/s);
    expect(corrected).toContain(">Treatment</h2>");
  });
});

describe("an answer to a case another officer answered meanwhile", () => {
  it("is told the case was answered, not that the claim lapsed", async () => {
    await t.addStaff("baraka", PASSWORD);
    const stored = await unsureCase({ language: "en", source: "api" });
    const id = stored.result.request_id;
    const amina = await openedBy("amina", id);
    // Her claim lapses (as if CLAIM_SECONDS passed); Baraka takes the case and answers it.
    await t.redis.del(await claimKey(id));
    expect(await t.records.reviews.claim(id, "baraka")).toEqual({ ok: true });
    const decided = await answerCase({ records: t.records, isHealthy: () => false }, id, {
      kind: "answered",
      diagnosis: "Nitrogen deficiency",
      advice: "Top-dress.",
      officer: "baraka",
      at: new Date().toISOString(),
    });
    expect(decided.status).toBe("done");
    const late = await amina.post(`/console/review/${id}/answer`, {
      kind: "answered",
      diagnosis: "Potassium deficiency",
      advice: "Apply wood ash & mulch <now>.",
    });
    expect(late.statusCode).toBe(303);
    const queue = (await amina.get("/console/review")).body;
    expect(queue).toContain("This case has already been answered or has expired.");
    // What she wrote comes back to copy, escaped as any text on the page.
    expect(queue).toContain(
      "What you wrote, to copy: Potassium deficiency: Apply wood ash &amp; mulch &lt;now&gt;.",
    );
  });
});
