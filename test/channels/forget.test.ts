// Everything kept about a farmer, deleted in their chain of channel jobs: by their own "0" twice (here by SMS,
// while a reply waits for them on WhatsApp), or queued by the console for a farmer who asked the call centre.
// Real Redis, the real webhooks, worker and Twilio adapter against the loopback stand-in.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FARMER_REPLIES } from "../../channels/limits.js";
import { FORGET_CONFIRM_SECONDS } from "../../src/limits.js";
import { counting, loadCore } from "./support/core.js";
import { resultFixture } from "./support/fixtures.js";
import { type Harness, startHarness, TEST_CONFIG, untilIdle } from "./support/harness.js";
import { postTwilio } from "./support/webhooks.js";

let h: Harness;
let core: Awaited<ReturnType<typeof loadCore>>;
let sid = 0;

beforeAll(async () => {
  core = await loadCore();
  h = await startHarness({ name: "forget", diagnoser: counting(core.diagnoser), knowledge: core.knowledge });
  h.startWorker();
}, 120_000);

afterAll(async () => {
  await h?.close();
  await core?.diagnoser.close();
});

function sms(from: string, body: string) {
  const messageSid = `SM${String(++sid).padStart(32, "4")}`;
  return postTwilio(h.app, {
    MessageSid: messageSid,
    SmsMessageSid: messageSid,
    AccountSid: TEST_CONFIG.twilio.accountSid,
    From: from,
    To: TEST_CONFIG.twilio.smsFrom,
    Body: body,
    NumMedia: "0",
  });
}

const whatsappTarget = (phone: string) => ({
  provider: "twilio",
  channel: "whatsapp",
  to: `whatsapp:${phone}`,
});

/** A farmer with a result, a chosen language and a reply waiting for them on WhatsApp. */
async function farmerWithData(phone: string) {
  const stored = await h.records.record(resultFixture(), {
    language: "en",
    owner: phone,
    source: "whatsapp",
  });
  await h.languages.set(phone, "fr");
  await h.windows.hold({ ...whatsappTarget(phone), text: "An officer answered." });
  return stored;
}

async function nothingLeftOf(phone: string, code: string) {
  expect(await h.store.getByCode(code)).toBeUndefined();
  expect(await h.store.listFor(phone)).toEqual([]);
  expect(await h.records.sent.list(phone)).toEqual([]);
  expect(await h.windows.count(whatsappTarget(phone))).toBe(0);
  // Their language went too: the number's country decides again (Kenya: Swahili).
  expect(await h.languages.resolve(phone, { phone })).toBe("sw");
}

describe("deleting everything about a farmer", () => {
  it("by their own 0, twice: the first says what will go, the second deletes it on every channel", async () => {
    const phone = "+254711000222";
    const stored = await farmerWithData(phone);
    const texts = () =>
      h.standIn
        .sends("twilio")
        .filter((s) => s.body.To === phone)
        .map((s) => s.body.Body);

    expect((await sms(phone, FARMER_REPLIES.forget)).statusCode).toBe(200);
    await untilIdle(h);
    expect(texts()).toEqual([
      h.renderer.texts("fr", "forget_confirm", { minutes: FORGET_CONFIRM_SECONDS / 60 }),
    ]);
    expect(await h.store.getByCode(stored.code)).toBeDefined();

    expect((await sms(phone, FARMER_REPLIES.forget)).statusCode).toBe(200);
    await untilIdle(h);
    expect(texts().at(-1)).toBe(h.renderer.texts("fr", "forgotten"));
    await nothingLeftOf(phone, stored.code);
    // Not told about keeping photos either (which would record that they were told).
    expect(await h.records.consent.get(phone)).toBeUndefined();
  });

  it("queued by the console: run in the farmer's chain, the same deletion", async () => {
    const phone = "+254711000333";
    const stored = await farmerWithData(phone);
    await h.queue.enqueueForget(phone);
    await untilIdle(h);
    await nothingLeftOf(phone, stored.code);
  });
});
