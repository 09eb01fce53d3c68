import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routingOwner } from "../../channels/core/registry.js";
import { viewOf } from "../../channels/core/render/view.js";
import { WHATSAPP_REPLY_WINDOW_MS } from "../../channels/limits.js";
import { PROVIDERS } from "../../channels/providers.js";
import type { DiagnosisResult } from "../../src/diagnosis/types.js";
import { createResultSink } from "../../src/results/sink.js";
import type { ResultSink } from "../../src/results/types.js";
import { awaitsOfficer } from "../../src/review/queue.js";
import { counting, leafPhoto, loadCore } from "./support/core.js";
import { type Harness, startHarness, TEST_CONFIG, untilIdle } from "./support/harness.js";

let h: Harness;
let core: Awaited<ReturnType<typeof loadCore>>;
let sink: ResultSink;

// What the REST route holds after POST /diagnosis/ (standard level, the partner's language).
async function restResult(seed: number): Promise<DiagnosisResult> {
  return core.diagnoser.diagnose(
    await leafPhoto(seed),
    { language: "en", detailLevel: "standard", includeBbox: false },
    crypto.randomUUID(),
  );
}

beforeAll(async () => {
  core = await loadCore();
  h = await startHarness({ name: "routing", diagnoser: counting(core.diagnoser), knowledge: core.knowledge });
  h.startWorker();
  sink = createResultSink({
    record: h.records.record,
    enqueueDelivery: h.queue.enqueueDelivery,
    ownerOf: routingOwner(PROVIDERS),
  });
}, 120_000);

afterAll(async () => {
  await h?.close();
  await core?.diagnoser.close();
});

describe("user_data routing: a REST result also goes to the farmer", () => {
  it("WhatsApp: sent through Twilio at simple level, once, and kept as the farmer's last result", async () => {
    // The farmer wrote within the last day: WhatsApp's window is open (reply-window.test.ts: when it is not).
    await h.windows.open(
      { provider: "twilio", channel: "whatsapp", to: "whatsapp:+254733000444" },
      WHATSAPP_REPLY_WINDOW_MS,
      Date.now(),
    );
    const result = await restResult(4);
    await sink(result, {
      language: "en",
      source: "api",
      routing: { channel: "whatsapp", phone: "+254733000444" },
    });
    await sink(result, {
      language: "en",
      source: "api",
      routing: { channel: "whatsapp", phone: "+254733000444" },
    });
    const [send] = await h.standIn.waitForSends("twilio", 1, 30_000);
    const stored = await h.store.get(result.request_id);
    expect(stored?.owner).toBe("+254733000444");
    expect(send!.body).toMatchObject({
      From: `whatsapp:${TEST_CONFIG.twilio.whatsappFrom}`,
      To: "whatsapp:+254733000444",
    });
    expect(send!.body.Body).toBe(
      h.renderer.result(viewOf(stored!, "en", core.knowledge), "en", h.capabilities("twilio", "whatsapp")),
    );
    await untilIdle(h);
    expect(h.standIn.sends("twilio")).toHaveLength(1);
  }, 60_000);

  it("SMS: sent through Africa's Talking in at most 3 segments", async () => {
    const result = await restResult(5);
    await sink(result, {
      language: "fr",
      source: "api",
      routing: { channel: "sms", phone: "+221771234567" },
    });
    const [send] = await h.standIn.waitForSends("africastalking", 1, 30_000);
    const stored = await h.store.get(result.request_id);
    expect(send!.body).toMatchObject({
      to: "+221771234567",
      // As the worker renders it: with "an officer will look" where the result is in the review queue.
      message: h.renderer.result(
        viewOf(stored!, "fr", core.knowledge, { officerReview: awaitsOfficer }),
        "fr",
        h.capabilities("africastalking", "sms"),
      ),
    });
  }, 60_000);

  it("Telegram: sent to the chat", async () => {
    const result = await restResult(6);
    await sink(result, { language: "pt", source: "api", routing: { channel: "telegram", chatId: "123456" } });
    const [send] = await h.standIn.waitForSends("telegram", 1, 30_000);
    expect(send!.body).toMatchObject({ chat_id: "123456", parse_mode: "HTML" });
    expect((await h.store.get(result.request_id))?.owner).toBe("tg:123456");
  }, 60_000);

  it("without routing keys, only stores", async () => {
    const result = await restResult(7);
    const counts = await h.queue.queue.getJobCounts();
    await sink(result, { language: "en", source: "api" });
    expect((await h.store.get(result.request_id))?.code).toMatch(/^[A-Z2-9]{6}$/);
    expect(await h.queue.queue.getJobCounts()).toEqual(counts);
  });
});
