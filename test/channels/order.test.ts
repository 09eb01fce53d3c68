// The order of a farmer's replies, and what they hear while a photo takes long or a provider fails. The
// core is beside the point: a test double answers every photo at once; the webhooks, the queue, the worker
// and the providers' stand-ins are real.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { retryAllFailed, retryFailed } from "../../channels/core/failed-jobs.js";
import { inboundJobId } from "../../channels/core/queue.js";
import { createTexts } from "../../channels/core/render/texts.js";
import { RECEIVED_NOTICE_AFTER_MS } from "../../channels/limits.js";
import { createKnowledge } from "../../src/diagnosis/kb.js";
import { TelegramFarmer, TwilioFarmer } from "./support/conversation.js";
import { FixedDiagnoserDouble } from "./support/doubles.js";
import { resultFixture, telegramText } from "./support/fixtures.js";
import { type Harness, startHarness, TEST_CONFIG } from "./support/harness.js";
import type { Recorded } from "./support/providers.js";
import { until } from "./support/wait.js";

const texts = createTexts();
const double = new FixedDiagnoserDouble();
let h: Harness;

const toChat = (chat: number) => (r: Recorded) => r.body.chat_id === String(chat);
const toPhone = (phone: string) => (r: Recorded) => r.body.To === `whatsapp:${phone}`;
const telegramFarmer = (chat: number) => new TelegramFarmer(h, `farmer ${chat}`, "", chat, "fr", "fr");
const whatsappFarmer = (phone: string) => new TwilioFarmer(h, phone, "", phone, true, "fr");

beforeAll(async () => {
  h = await startHarness({ name: "order", diagnoser: double, knowledge: await createKnowledge() });
  h.startWorker({ concurrency: 4 });
  for (const name of ["held", "slow", "flaky", "gone-for-good"])
    h.standIn.media.set(name, Buffer.from("jpeg"));
});
afterAll(async () => {
  await h?.close();
});

describe("one farmer's messages are answered in the order they came", () => {
  it("also when the answer to the first one fails and is retried; other farmers do not wait", async () => {
    const amina = telegramFarmer(880_001);
    const release = h.standIn.holdMedia("held");
    await amina.photo("held", "a leaf");
    await until(
      () => h.standIn.requests.some((r) => r.path.endsWith("/photos/held")),
      "the photo's download",
    );
    await amina.text("aide");
    const help = amina.lastJobId();
    await until(
      async () => (await h.queue.queue.getJobState(help)) === "delayed",
      "the help waiting its turn",
    );

    // Another farmer is answered meanwhile.
    const other = telegramFarmer(880_002);
    await other.text("aide");
    await other.reply(/^Envoyez une photo nette/);
    expect(amina.replies()).toHaveLength(0);

    // The photo's answer is refused once (Telegram down for a moment), then retried.
    h.standIn.failNext("telegram", 1, 502);
    release();
    await amina.reply(/^Envoyez une photo nette/, 30_000);
    const sent = h.standIn.sends("telegram").filter(toChat(880_001));
    expect(sent.map((r) => r.failedWith)).toEqual([502, undefined, undefined]);
    expect(String(sent[1]!.body.text)).toContain(texts("fr", "code_line", { code: "" }).trim());
    expect(sent[2]!.body.text).toBe(texts("fr", "help"));
    expect(h.logs.join("\n")).toContain("job attempt failed, will retry");
  }, 40_000);
});

describe("a failed job put back by an operator (npm run jobs retry)", () => {
  it("waits for the farmer's message in flight, and the farmer's next message waits for it", async () => {
    const amina = telegramFarmer(880_030);
    const codeOf = async (jobId: string) => {
      const job = await h.queue.queue.getJob(jobId);
      const requestId = job?.data.kind === "inbound" ? job.data.requestId : undefined;
      return (await h.store.get(requestId!))!.code;
    };
    h.standIn.media.set("refused", Buffer.from("jpeg"));
    h.standIn.media.set("later", Buffer.from("jpeg"));

    // Telegram refuses her first answer for good (403), once.
    h.standIn.failNext("telegram", 1, 403);
    await amina.photo("refused", "a leaf");
    const first = amina.lastJobId();
    await until(async () => (await h.queue.queue.getJobState(first)) === "failed", "the first job failing");

    // Her second photo is being fetched when the operator puts the first back.
    const release = h.standIn.holdMedia("later");
    await amina.photo("later", "another leaf");
    const second = amina.lastJobId();
    await until(
      () => h.standIn.requests.some((r) => r.path.endsWith("/photos/later")),
      "the second photo's download",
    );
    expect(await retryFailed(h.queue, first)).toBe(true);
    await until(async () => (await h.queue.queue.getJobState(first)) === "delayed", "the first waiting");
    await amina.text("aide");
    const help = amina.lastJobId();
    await until(async () => (await h.queue.queue.getJobState(help)) === "delayed", "the help waiting");
    expect(amina.replies()).toHaveLength(0);

    release();
    await amina.reply(/^Envoyez une photo nette/, 30_000);
    const [secondAnswer, firstAnswer, helpAnswer] = amina.replies().map((r) => r.text);
    expect(secondAnswer).toContain(await codeOf(second));
    expect(firstAnswer).toContain(await codeOf(first));
    expect(helpAnswer).toBe(texts("fr", "help"));
    expect(amina.replies()).toHaveLength(3);
  }, 40_000);

  it("retry-all puts a farmer's failed jobs back in the order they came", async () => {
    const juma = telegramFarmer(880_031);
    h.standIn.media.set("refused-too", Buffer.from("jpeg"));
    // Telegram refuses both answers for good (403): her help, then her photo's answer.
    h.standIn.failNext("telegram", 2, 403);
    await juma.text("aide");
    const help = juma.lastJobId();
    await juma.photo("refused-too", "a leaf");
    const photo = juma.lastJobId();
    for (const id of [help, photo])
      await until(async () => (await h.queue.queue.getJobState(id)) === "failed", `${id} failing`);

    expect(await retryAllFailed(h.queue)).toBeGreaterThanOrEqual(2);
    await until(() => juma.replies().length === 2, "both answers", 30_000);
    const [first, second] = juma.replies().map((r) => r.text);
    expect(first).toBe(texts("fr", "help"));
    expect(second).toContain(texts("fr", "code_line", { code: "" }).trim());
  }, 40_000);
});

describe("a farmer is never left in silence", () => {
  it("WhatsApp: 'photo received' once the answer takes longer than a few seconds, then the answer", async () => {
    const awa = whatsappFarmer("+2250700000101");
    const release = h.standIn.holdMedia("slow");
    const posted = Date.now();
    await awa.photo("slow", "a leaf");
    const notice = await awa.reply(/^Photo reçue/, RECEIVED_NOTICE_AFTER_MS + 5_000);
    expect(notice.text).toBe(texts("fr", "received"));
    expect(notice.at - posted).toBeGreaterThanOrEqual(RECEIVED_NOTICE_AFTER_MS - 50);
    expect(notice.at - posted).toBeLessThan(RECEIVED_NOTICE_AFTER_MS + 2_000);
    release();
    await awa.reply(new RegExp(texts("fr", "code_line", { code: "" }).trim()));
    expect(awa.replies().map((r) => r.text)[0]).toBe(notice.text);
  }, 30_000);

  it("a photo that cannot be fetched: told at the first failure, asked to resend at the last, logged", async () => {
    const farmer = "+2250700000102";
    h.standIn.failMedia("gone-for-good", 10, 503);
    const message = {
      provider: "twilio",
      channel: "whatsapp",
      messageId: `MM${"9".repeat(32)}`,
      from: farmer,
      to: TEST_CONFIG.twilio.whatsappFrom,
      owner: farmer,
      phone: farmer,
      media: { ref: `${h.standIn.baseUrl}/media/gone-for-good`, contentType: "image/jpeg" },
      receivedAt: new Date().toISOString(),
    };
    // Two quick attempts instead of the production schedule (limits.ts RETRY_DELAYS_MS, about four minutes).
    await h.queue.queue.add(
      "inbound",
      { kind: "inbound", message },
      { jobId: inboundJobId(message), attempts: 2, backoff: { type: "fixed", delay: 200 } },
    );
    await until(
      async () => (await h.queue.queue.getJobState(inboundJobId(message))) === "failed",
      "the job failing",
    );
    await until(() => h.standIn.sends("twilio").filter(toPhone(farmer)).length === 2, "both messages");
    expect(
      h.standIn
        .sends("twilio")
        .filter(toPhone(farmer))
        .map((r) => r.body.Body),
    ).toEqual([texts("fr", "delayed"), texts("fr", "gave_up")]);
    const failed = h.logs.map((line) => JSON.parse(line) as { msg: string; level: number; jobId?: string });
    expect(failed.filter((l) => l.jobId === inboundJobId(message)).map((l) => [l.level, l.msg])).toEqual([
      [40, "job attempt failed, will retry"],
      [50, "job failed for good, kept for npm run jobs"],
    ]);
  }, 30_000);
});

describe("a message chained ahead of another that reaches the queue late", () => {
  // Its webhook chained it and stalled (or answered 503 and is delivered again) before the queue took it.
  const chained = (chat: number, id: string) => telegramText(chat, id, "aide");

  it("is waited for: the farmer hears the answers in the order they wrote", async () => {
    const chat = 880_040;
    const amina = telegramFarmer(chat);
    const first = chained(chat, "880040001");
    await h.queue.turns.claim(first.owner, inboundJobId(first));
    h.standIn.media.set("after-the-late-one", Buffer.from("jpeg"));
    await amina.photo("after-the-late-one", "a leaf");
    const second = amina.lastJobId();
    await until(async () => (await h.queue.queue.getJobState(second)) === "delayed", "the photo waiting");
    expect(amina.replies()).toHaveLength(0);

    await h.queue.queue.add(
      "inbound",
      { kind: "inbound", message: first, conversation: first.owner },
      { jobId: inboundJobId(first) },
    );
    await amina.reply(/Code du résultat/, 30_000);
    const [help, answer] = amina.replies().map((r) => r.text);
    expect(help).toBe(texts("fr", "help"));
    expect(answer).toMatch(/Code du résultat/);
  }, 30_000);
});

describe("captions", () => {
  it("a caption reaches the diagnosis as its description; a language's name in it sets the language", async () => {
    const chat = 880_010;
    const farmer = telegramFarmer(chat);
    h.standIn.media.set("captioned", Buffer.from("jpeg"));
    await farmer.photo("captioned", "a leaf", "leaves have brown rings, started after rain");
    await farmer.reply(/Code du résultat/);
    expect(double.contexts.at(-1)).toMatchObject({
      language: "fr",
      description: "leaves have brown rings, started after rain",
    });

    await farmer.photo("captioned", "a leaf", "Kiswahili");
    await farmer.reply(/Namba ya matokeo/);
    expect(double.contexts.at(-1)?.language).toBe("sw");
    expect(double.contexts.at(-1)?.description).toBeUndefined();
    expect(await h.languages.resolve(`tg:${chat}`, { tag: "fr" })).toBe("sw");

    const maria = whatsappFarmer("+2250700000103");
    h.standIn.media.set("wa-captioned", Buffer.from("jpeg"));
    await maria.photo("wa-captioned", "a leaf", "Español: manchas marrones en las hojas");
    await maria.reply(/Código del resultado/);
    expect(double.contexts.at(-1)).toMatchObject({
      language: "es",
      description: "manchas marrones en las hojas",
    });
  }, 30_000);
});

describe("an extension officer's answer", () => {
  it("goes to the conversation the photo came from, in the farmer's language, after their other replies", async () => {
    const chat = 880_020;
    const owner = `tg:${chat}`;
    const unsure = resultFixture({ outcome: "unsure", crop_health: "unknown", diagnoses: [] });
    const stored = await h.records.record(unsure, {
      language: "fr",
      owner,
      source: "telegram",
      replyTo: { provider: "telegram", channel: "telegram", to: String(chat) },
    });
    const at = new Date().toISOString();
    const id = stored.result.request_id;
    await h.records.store.setState(id, "review", { reasons: ["unsure"], queuedAt: at });
    await h.records.store.setState(id, "decision", {
      kind: "corrected",
      classId: "maize__common_rust",
      officer: "wanjiru",
      at,
    });
    await h.languages.set(owner, "sw");
    await h.queue.enqueueAnswer(id, owner);
    await until(() => h.standIn.sends("telegram").some(toChat(chat)), "the officer's answer");
    const [answer] = h.standIn.sends("telegram").filter(toChat(chat));
    expect(String(answer!.body.text)).toContain(
      texts("sw", "officer_class", { code: stored.code, name: "Kutu ya kawaida ya mahindi" }),
    );
    // The code looked up afterwards gives the officer's answer, not the model's unsure reading.
    const farmer = new TelegramFarmer(h, "farmer 880020", "", chat, "sw", "sw");
    await farmer.text(stored.code);
    const lookedUp = await farmer.reply(/./);
    expect(lookedUp.text).toBe(answer!.body.text);
  });
});
