// A farmer's job whose predecessor was chained by a webhook but has not reached the queue waits for it a while
// (here WAIT_MS, in production TURN_MISSING_WAIT_MS), then runs without it; a job an operator puts back (npm run
// jobs retry) at the end of its farmer's chain waits the same, counted from when it was put back.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { retryFailed } from "../../channels/core/failed-jobs.js";
import { inboundJobId } from "../../channels/core/queue.js";
import { createTexts } from "../../channels/core/render/texts.js";
import { createKnowledge } from "../../src/diagnosis/kb.js";
import { FixedDiagnoserDouble } from "./support/doubles.js";
import { telegramText } from "./support/fixtures.js";
import { type Harness, startHarness } from "./support/harness.js";
import { until } from "./support/wait.js";

const WAIT_MS = 1_500;
const texts = createTexts();
let h: Harness;

beforeAll(async () => {
  h = await startHarness({
    name: "requeue",
    diagnoser: new FixedDiagnoserDouble(),
    knowledge: await createKnowledge(),
  });
  // Every worker of this harness waits WAIT_MS for a predecessor not yet queued.
  h.startWorker({ missingWaitMs: WAIT_MS });
});
afterAll(async () => {
  await h?.close();
});

const chat = 881_001;
const toChat = () =>
  h.standIn.sends("telegram").filter((s) => s.body.chat_id === String(chat) && !s.failedWith);

describe("a predecessor that never reaches the queue", () => {
  it("is given up after the wait, and the farmer is answered", async () => {
    const other = 881_002;
    const lost = telegramText(other, "881002001", "aide");
    await h.queue.turns.claim(lost.owner, inboundJobId(lost));
    const asked = telegramText(other, "881002002", "aide");
    await h.queue.enqueueInbound(asked);
    await until(
      () => h.standIn.sends("telegram").some((s) => s.body.chat_id === String(other)),
      "the answer",
    );
    expect(h.logs.join("\n")).toContain("the job before this one never reached the queue");
  }, 30_000);
});

describe("a job put back behind a message still on its way", () => {
  it("waits for that message from when it was put back", async () => {
    // Telegram refuses the first answer for good (403): the job fails and waits for an operator.
    h.standIn.failNext("telegram", 1, 403);
    const failed = telegramText(chat, "881001001", "aide");
    await h.queue.enqueueInbound(failed);
    const failedId = inboundJobId(failed);
    await until(
      async () => (await h.queue.queue.getJobState(failedId)) === "failed",
      "the first job failing",
    );
    // Long enough ago that, counted from its first arrival, it would no longer wait for anything.
    await until(
      async () => Date.now() - (await h.queue.queue.getJob(failedId))!.timestamp > WAIT_MS,
      "the failed job's wait running out",
    );

    // The farmer's next message: its webhook has chained it, and its job is not in the queue yet.
    const late = telegramText(chat, "881001002", "Kiswahili");
    await h.queue.turns.claim(late.owner, inboundJobId(late));
    expect(await retryFailed(h.queue, failedId)).toBe(true);
    await until(
      async () => (await h.queue.queue.getJobState(failedId)) === "delayed",
      "the put-back job waiting",
    );
    await h.queue.queue.add(
      "inbound",
      { kind: "inbound", message: late, conversation: late.owner },
      { jobId: inboundJobId(late) },
    );
    await until(() => toChat().length >= 2, "both answers");
    const [first, second] = toChat().map((s) => String(s.body.text));
    // The language chosen in the later message first; the help, put back behind it, then in that language.
    expect([first, second]).toEqual([
      texts("sw", "language_changed", { name: "Kiswahili" }),
      texts("sw", "help"),
    ]);
  }, 30_000);
});
