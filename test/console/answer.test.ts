import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SETTLE_AFTER_MS, SETTLE_WITHIN_MINUTES } from "../../src/limits.js";
import { settleAnswers } from "../../src/review/answer.js";
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

describe("an officer's answer whose message to the farmer cannot be queued yet", () => {
  it("is saved, the officer is told it is being passed on, and it reaches the queue once it answers", async () => {
    const stored = await t.records.record(
      resultFixture({ outcome: "unsure", diagnoses: [], crop_health: "unknown" }),
      {
        language: "sw",
        source: "telegram",
        owner: "tg:7001",
        replyTo: { provider: "telegram", channel: "telegram", to: "7001" },
      },
    );
    const id = stored.result.request_id;
    const v = new Visitor(t.app);
    await v.signIn("amina", PASSWORD);
    await v.get("/console/review");
    expect((await v.post(`/console/review/${id}/claim`, {})).statusCode).toBe(303);
    await v.get(`/console/review/${id}`);
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
