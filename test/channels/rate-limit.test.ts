// A provider's 429 pauses the whole queue, in every worker, for the wait the provider names. Text messages
// only (help replies): the diagnosis core is never called, so a test double that refuses to be called
// stands in for it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inboundJobId } from "../../channels/core/queue.js";
import { retryAfterMs } from "../../channels/core/retry-after.js";
import type { InboundMessage } from "../../channels/core/types.js";
import { WORKER_LIMITER } from "../../channels/core/worker.js";
import { DEFAULT_RETRY_AFTER_MS, MAX_RETRY_AFTER_MS } from "../../channels/limits.js";
import type { Diagnoser } from "../../src/diagnosis/diagnoser.js";
import { createKnowledge } from "../../src/diagnosis/kb.js";
import { type Harness, startHarness, untilIdle } from "./support/harness.js";

const noDiagnosis: Diagnoser = {
  diagnose: () => Promise.reject(new Error("a text message must not reach the core")),
  modelReady: () => true,
  close: async () => {},
};

let h: Harness;
let next = 0;

function text(provider: "telegram" | "africastalking"): InboundMessage {
  next += 1;
  const telegram = provider === "telegram";
  const from = telegram ? String(8_000 + next) : `+2547000${String(next).padStart(5, "0")}`;
  return {
    provider,
    channel: telegram ? "telegram" : "sms",
    messageId: telegram ? String(700_000 + next) : `ATXid_rl_${next}`,
    from,
    owner: telegram ? `tg:${from}` : from,
    to: telegram ? "bot" : "21525",
    text: "HELP",
    receivedAt: new Date().toISOString(),
  };
}

const state = (message: InboundMessage) => h.queue.queue.getJobState(inboundJobId(message));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => Promise<boolean>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await sleep(20);
  }
}

beforeAll(async () => {
  h = await startHarness({ name: "ratelimit", diagnoser: noDiagnosis, knowledge: await createKnowledge() });
});
afterAll(async () => {
  await h?.close();
});

describe("a provider's 429", () => {
  it("pauses the queue for every worker until the provider's wait is over", async () => {
    const workers = [h.startWorker({ concurrency: 1 }), h.startWorker({ concurrency: 1 })];
    const before = h.standIn.sends("telegram").length;
    h.standIn.failNext("telegram", 1, 429, 3);
    const first = text("telegram");
    await h.queue.enqueueInbound(first);
    // The pause is on once the limiter key holds more than the limiter's budget.
    await until(async () => (await h.queue.queue.getRateLimitTtl(WORKER_LIMITER.max)) > 0);
    const refused = h.standIn.sends("telegram")[before]!;
    expect(refused.failedWith).toBe(429);

    // A second message arrives mid-pause: a worker is free, yet neither job runs.
    const second = text("telegram");
    await h.queue.enqueueInbound(second);
    await sleep(1_500);
    expect(await state(first)).toBe("waiting");
    expect(await state(second)).toBe("waiting");
    expect(h.standIn.sends("telegram")).toHaveLength(before + 1);

    const sent = (await h.standIn.waitForSends("telegram", before + 3)).slice(before + 1);
    for (const send of sent) {
      expect(send.failedWith).toBeUndefined();
      expect(send.at - refused.at).toBeGreaterThanOrEqual(2_950);
    }
    expect(sent.map((s) => s.body.chat_id).sort()).toEqual([first.from, second.from].sort());
    await untilIdle(h);
    // The throttled try used no attempt.
    expect((await h.queue.queue.getJob(inboundJobId(first)))!.attemptsMade).toBeLessThanOrEqual(1);
    expect(h.logs.join("\n")).toMatch(/"retryAfterMs":3000.*"provider rate limit"/);
    await Promise.all(workers.map((w) => w.close()));
  }, 30_000);

  it("honours Africa's Talking's Retry-After header", async () => {
    const worker = h.startWorker();
    const before = h.standIn.sends("africastalking").length;
    h.standIn.failNext("africastalking", 1, 429, 2);
    const message = text("africastalking");
    await h.queue.enqueueInbound(message);
    const [refused, accepted] = (await h.standIn.waitForSends("africastalking", before + 2)).slice(before);
    expect([refused!.failedWith, accepted!.failedWith]).toEqual([429, undefined]);
    expect(accepted!.at - refused!.at).toBeGreaterThanOrEqual(1_950);
    await until(async () => (await state(message)) === "completed");
    await worker.close();
  }, 30_000);
});

describe("Retry-After", () => {
  const now = Date.parse("2026-11-23T10:00:00Z");

  it.each([
    ["2", 2_000],
    [" 120 ", MAX_RETRY_AFTER_MS],
    [3, 3_000],
    ["Mon, 23 Nov 2026 10:00:05 GMT", 5_000],
    ["Mon, 23 Nov 2026 09:59:00 GMT", DEFAULT_RETRY_AFTER_MS],
    ["0", DEFAULT_RETRY_AFTER_MS],
    ["soon", DEFAULT_RETRY_AFTER_MS],
    [undefined, DEFAULT_RETRY_AFTER_MS],
    [null, DEFAULT_RETRY_AFTER_MS],
  ])("%j → %i ms", (value, ms) => {
    expect(retryAfterMs(value, now)).toBe(ms);
  });
});
