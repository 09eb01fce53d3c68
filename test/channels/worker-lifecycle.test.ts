// Crash, shutdown and failed-job handling. The diagnosis core is beside the point here, so these tests use
// a test double of it (HangingDiagnoserDouble) whose timing they control; every other part is real.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listFailed, retryAllFailed, retryFailed } from "../../channels/core/failed-jobs.js";
import { inboundJobId } from "../../channels/core/queue.js";
import type { InboundMessage } from "../../channels/core/types.js";
import type { Diagnoser } from "../../src/diagnosis/diagnoser.js";
import { createKnowledge } from "../../src/diagnosis/kb.js";
import type { DiagnosisResult } from "../../src/diagnosis/types.js";
import { resultFixture } from "./support/fixtures.js";
import { type Harness, startHarness } from "./support/harness.js";

/** Test double of the core: each call waits until the test releases it, or forever (a crashed process). */
class HangingDiagnoserDouble implements Diagnoser {
  readonly pending: Array<{ requestId: string; release: () => void }> = [];
  calls = 0;
  hangForever = false;

  diagnose(_image: Buffer, _context: unknown, requestId: string): Promise<DiagnosisResult> {
    this.calls += 1;
    if (this.hangForever) return new Promise(() => {});
    return new Promise((resolve) => {
      this.pending.push({ requestId, release: () => resolve(resultFixture({ request_id: requestId })) });
    });
  }
  async waitForCall(n: number) {
    while (this.calls < n) await new Promise((r) => setTimeout(r, 20));
  }
  modelReady = () => true;
  close = async () => {};
}

let h: Harness;
const double = new HangingDiagnoserDouble();
let next = 0;

function telegramPhoto(): InboundMessage {
  next += 1;
  return {
    provider: "telegram",
    channel: "telegram",
    messageId: String(900_000 + next),
    from: String(5_000 + next),
    to: "bot",
    owner: `tg:${5_000 + next}`,
    media: { ref: "leaf" },
    languageHint: "fr",
    receivedAt: new Date().toISOString(),
  };
}

async function state(message: InboundMessage) {
  return h.queue.queue.getJobState(inboundJobId(message));
}

async function until(check: () => Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  h = await startHarness({ name: "lifecycle", diagnoser: double, knowledge: await createKnowledge() });
  h.standIn.media.set("leaf", Buffer.from("jpeg bytes the double does not read"));
});
afterAll(async () => {
  await h?.close();
});

describe("worker lifecycle", () => {
  it("loses nothing when a worker dies mid-job: another one takes the job over", async () => {
    const crashed = h.startWorker({ lockDuration: 1_000, stalledInterval: 500 });
    double.hangForever = true;
    const message = telegramPhoto();
    await h.queue.enqueueInbound(message);
    await double.waitForCall(1);
    expect(await state(message)).toBe("active");

    // The process dies: no more lock renewals, the job never finishes there.
    await crashed.close(true);
    double.hangForever = false;
    const survivor = h.startWorker({ lockDuration: 1_000, stalledInterval: 500 });
    await until(async () => double.pending.length > 0);
    double.pending.shift()!.release();
    await until(async () => (await state(message)) === "completed");
    const sent = h.standIn.sends("telegram");
    expect(sent).toHaveLength(1);
    expect(sent[0]!.body).toMatchObject({ chat_id: message.from, parse_mode: "HTML" });
    await survivor.close();
  });

  it("finishes active jobs on graceful shutdown", async () => {
    const worker = h.startWorker();
    const message = telegramPhoto();
    const calls = double.calls;
    await h.queue.enqueueInbound(message);
    await double.waitForCall(calls + 1);
    const closing = worker.close();
    setTimeout(() => double.pending.shift()!.release(), 300);
    await closing;
    expect(await state(message)).toBe("completed");
  });

  it("keeps a job that failed for good, lists it, and retries it", async () => {
    const worker = h.startWorker();
    const message = telegramPhoto();
    h.standIn.failNext("telegram", 1, 403);
    await h.queue.enqueueInbound(message);
    await until(async () => double.pending.length > 0);
    double.pending.shift()!.release();
    await until(async () => (await state(message)) === "failed");

    const failed = await listFailed(h.queue.queue);
    const listed = failed.find((f) => f.id === inboundJobId(message));
    expect(listed).toMatchObject({ kind: "inbound", route: "telegram/telegram" });
    expect(listed!.reason).toContain("403");
    expect(JSON.stringify(failed)).not.toContain(message.from);

    // The job already stored its result: the retry sends it without diagnosing again.
    const calls = double.calls;
    expect(await retryFailed(h.queue, inboundJobId(message))).toBe(true);
    await until(async () => (await state(message)) === "completed");
    expect(double.calls).toBe(calls);
    expect(await retryFailed(h.queue, "no-such-job")).toBe(false);
    expect(await retryAllFailed(h.queue)).toBe(0);
    await worker.close();
  });
});
