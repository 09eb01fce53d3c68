// The farmer's side of the expert loop, with the real model: "did this help?" under each answer (Telegram
// buttons, "reply 1 / 3" on WhatsApp and SMS), "wrong" sending the case to the officers' review queue, the
// photo notice on a farmer's first message with the way to refuse, and "an officer will look" when unsure.
import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeAction } from "../../channels/core/actions.js";
import { inboundJobId } from "../../channels/core/queue.js";
import { FARMER_REPLIES } from "../../channels/limits.js";
import { fieldPhotos, findUnsurePhoto } from "../e2e/unsure-photos.js";
import { loadCore } from "./support/core.js";
import { EXAMPLE_PHOTO, labelledExample } from "./support/fixtures.js";
import { type Harness, startHarness, TEST_CONFIG, untilIdle } from "./support/harness.js";
import type { Recorded } from "./support/providers.js";
import { until } from "./support/wait.js";
import { postTelegram, postTwilio } from "./support/webhooks.js";

let h: Harness;
let core: Awaited<ReturnType<typeof loadCore>>;
let update = 93_000_000;
let sid = 0;

beforeAll(async () => {
  core = await loadCore();
  h = await startHarness({
    name: "expert-loop",
    diagnoser: core.diagnoser,
    knowledge: core.knowledge,
    expertLoop: true,
  });
  h.startWorker();
  const [diagnosed] = await fieldPhotos(core.diagnoser, "diagnosed", 1);
  const unsure = await findUnsurePhoto(core.diagnoser);
  if (!diagnosed || !unsure)
    throw new Error("no field photo the model diagnoses, or none it is unsure about");
  h.standIn.media.set("diagnosed.jpg", await readFile(diagnosed));
  h.standIn.media.set("unsure.jpg", await readFile(unsure));
}, 180_000);

afterAll(async () => {
  await h?.close();
  await core?.diagnoser.close();
});

const texts = (sends: { body: Record<string, unknown> }[], field: string) =>
  sends.map((s) => String(s.body[field]));
const t = (lang: "sw" | "en", key: string, vars?: Record<string, string>) =>
  h.renderer.texts(lang, key, vars);

function telegram(chat: number, message: Record<string, unknown>) {
  update += 1;
  const from = { id: chat, is_bot: false, first_name: "Juma", language_code: "sw" };
  return postTelegram(
    h.app,
    "data" in message
      ? {
          update_id: update,
          callback_query: {
            id: `cb${update}`,
            from,
            chat_instance: "1",
            message: { message_id: 1, chat: { id: chat, type: "private" }, date: 1 },
            data: message.data,
          },
        }
      : {
          update_id: update,
          message: { message_id: update, from, chat: { id: chat, type: "private" }, date: 1, ...message },
        },
  );
}

function whatsapp(from: string, body: string, media?: string) {
  const messageSid = `${media ? "MM" : "SM"}${String(++sid).padStart(32, "0")}`;
  const form: Record<string, string> = {
    MessageSid: messageSid,
    SmsMessageSid: messageSid,
    AccountSid: TEST_CONFIG.twilio.accountSid,
    From: `whatsapp:${from}`,
    To: `whatsapp:${TEST_CONFIG.twilio.whatsappFrom}`,
    Body: body,
    NumMedia: media ? "1" : "0",
    ...(media ? { MediaContentType0: "image/jpeg", MediaUrl0: `${h.standIn.baseUrl}/media/${media}` } : {}),
  };
  return postTwilio(h.app, form);
}

/** The messages `list` gives, once there are at least `count` (the diagnosis runs the real model: a minute). */
async function atLeast(list: () => Recorded[], count: number, what: string): Promise<Recorded[]> {
  await until(() => list().length >= count, what, 60_000);
  return list();
}

const telegramTo = (chat: number) =>
  h.standIn.sends("telegram").filter((s) => s.body.chat_id === String(chat));
const whatsappTo = (phone: string) =>
  h.standIn.sends("twilio").filter((s) => s.body.To === `whatsapp:${phone}`);

describe("Telegram", () => {
  const CHAT = 990_001;

  it("asks whether the answer helped with two buttons, then tells about photos once, with a button to refuse", async () => {
    await telegram(CHAT, {
      photo: [{ file_id: "diagnosed.jpg", file_unique_id: "d", width: 416, height: 416 }],
    });
    const sends = await atLeast(() => telegramTo(CHAT), 3, "three messages");
    const stored = (await h.store.get((await h.records.store.lastFor(`tg:${CHAT}`))!.result.request_id))!;
    const [answer, feedback, notice] = sends;
    expect(String(answer!.body.text)).toContain(stored.code);
    expect(feedback!.body.text).toBe(t("sw", "feedback_question"));
    expect(feedback!.body.reply_markup).toEqual({
      inline_keyboard: [
        [
          {
            text: t("sw", "feedback_yes"),
            callback_data: encodeAction({ kind: "feedback", code: stored.code, helped: true }),
          },
          {
            text: t("sw", "feedback_no"),
            callback_data: encodeAction({ kind: "feedback", code: stored.code, helped: false }),
          },
        ],
      ],
    });
    expect(notice!.body.text).toBe(t("sw", "consent_notice_button"));
    expect(notice!.body.reply_markup).toEqual({
      inline_keyboard: [
        [{ text: t("sw", "consent_button"), callback_data: encodeAction({ kind: "refuse_photos" }) }],
      ],
    });
    expect((await h.records.consent.get(`tg:${CHAT}`))?.status).toBe("informed");

    // A second photo: feedback asked again, the notice not repeated.
    await telegram(CHAT, {
      photo: [{ file_id: "diagnosed.jpg", file_unique_id: "d2", width: 416, height: 416 }],
    });
    await atLeast(() => telegramTo(CHAT), 5, "two more messages");
    await untilIdle(h);
    expect(
      texts(telegramTo(CHAT), "text").filter((x) => x === t("sw", "consent_notice_button")),
    ).toHaveLength(1);
  }, 120_000);

  it("'No, it is wrong' puts the case in the review queue and says an officer will answer", async () => {
    const stored = (await h.records.store.lastFor(`tg:${CHAT}`))!;
    const before = telegramTo(CHAT).length;
    await telegram(CHAT, { data: encodeAction({ kind: "feedback", code: stored.code, helped: false }) });
    const reply = (await atLeast(() => telegramTo(CHAT), before + 1, "the reply"))[before]!;
    expect(reply.body.text).toBe(t("sw", "feedback_wrong", { code: stored.code }));
    const now = (await h.records.store.get(stored.result.request_id))!;
    expect(now.feedback?.helped).toBe(false);
    expect(now.review?.reasons).toContain("farmer_said_wrong");
    expect((await h.records.reviews.list()).map((c) => c.stored.code)).toContain(stored.code);
  }, 60_000);

  it("a verdict button naming another farmer's result changes nothing", async () => {
    const stored = (await h.records.store.lastFor(`tg:${CHAT}`))!;
    const before = (await h.records.store.get(stored.result.request_id))!.feedback;
    const other = 990_009;
    await telegram(other, { data: encodeAction({ kind: "feedback", code: stored.code, helped: true }) });
    const [reply] = await atLeast(() => telegramTo(other), 1, "the reply");
    expect(reply!.body.text).toBe(t("sw", "no_result"));
    expect((await h.records.store.get(stored.result.request_id))!.feedback).toEqual(before);
  }, 60_000);

  it("the refuse button records that photos must not be kept, and deletes those kept before", async () => {
    const stored = (await h.records.store.lastFor(`tg:${CHAT}`))!;
    const example = labelledExample({
      id: stored.result.request_id,
      code: stored.code,
      label: "tomato__late_blight",
      takenAt: stored.createdAt,
      consent: { basis: "informed_no_objection", at: stored.createdAt },
      modelOutcome: stored.result.outcome,
    });
    await h.records.examples.save(example, EXAMPLE_PHOTO, `tg:${CHAT}`);
    await h.records.examples.save({ ...example, id: "someone-else" }, EXAMPLE_PHOTO, "tg:1");
    const before = telegramTo(CHAT).length;
    await telegram(CHAT, { data: encodeAction({ kind: "refuse_photos" }) });
    const reply = (await atLeast(() => telegramTo(CHAT), before + 1, "the reply"))[before]!;
    expect(reply.body.text).toBe(t("sw", "consent_refused"));
    expect((await h.records.consent.get(`tg:${CHAT}`))?.status).toBe("refused");
    const kept = (await h.records.examples.list()).map((e) => e.id);
    expect(kept).not.toContain(stored.result.request_id);
    expect(kept).toContain("someone-else");
  }, 60_000);

  it("an unsure photo: the reply says an officer will look and gives the code; no 'did this help?'", async () => {
    const chat = 990_002;
    await telegram(chat, {
      photo: [{ file_id: "unsure.jpg", file_unique_id: "u", width: 416, height: 416 }],
    });
    const [answer, notice] = await atLeast(() => telegramTo(chat), 2, "two messages");
    const stored = (await h.records.reviews.list()).find((c) => c.stored.owner === `tg:${chat}`)!.stored;
    expect(stored.result.outcome).toBe("unsure");
    expect(String(answer!.body.text)).toContain(t("sw", "officer"));
    expect(String(answer!.body.text)).toContain(stored.code);
    expect(notice!.body.text).toBe(t("sw", "consent_notice_button"));
    expect(texts(telegramTo(chat), "text")).not.toContain(t("sw", "feedback_question"));
  }, 60_000);

  it("a refused 'did this help?' is asked again on the retry, without sending the answer twice", async () => {
    const chat = 990_004;
    // The answer goes through; Telegram answers the question after it with a 429 (wait 1 s).
    h.standIn.failNext("telegram", 1, 429, 1, 1);
    await telegram(chat, {
      photo: [{ file_id: "diagnosed.jpg", file_unique_id: "d4", width: 416, height: 416 }],
    });
    await atLeast(() => telegramTo(chat), 4, "the answer, the refused question, the question, the notice");
    await untilIdle(h);
    const stored = (await h.records.store.lastFor(`tg:${chat}`))!;
    const sends = telegramTo(chat).map((s) => ({ text: String(s.body.text), refused: s.failedWith }));
    expect(sends).toHaveLength(4);
    expect(sends[0]!.text).toContain(stored.code);
    expect(sends.slice(1)).toEqual([
      { text: t("sw", "feedback_question"), refused: 429 },
      { text: t("sw", "feedback_question"), refused: undefined },
      { text: t("sw", "consent_notice_button"), refused: undefined },
    ]);
  }, 60_000);

  it("so does a REST result routed to a chat: the answer once, the question again", async () => {
    const chat = 990_005;
    const stored = (await h.records.store.lastFor(`tg:${CHAT}`))!;
    h.standIn.failNext("telegram", 1, 429, 1, 1);
    await h.queue.enqueueDelivery(
      stored.result.request_id,
      { channel: "telegram", chatId: String(chat) },
      "sw",
    );
    await atLeast(() => telegramTo(chat), 3, "the answer, the refused question, the question");
    await untilIdle(h);
    const sends = telegramTo(chat).map((s) => ({ text: String(s.body.text), refused: s.failedWith }));
    expect(sends).toHaveLength(3);
    expect(sends[0]!.text).toContain(stored.code);
    expect(sends.slice(1)).toEqual([
      { text: t("sw", "feedback_question"), refused: 429 },
      { text: t("sw", "feedback_question"), refused: undefined },
    ]);
  }, 60_000);
});

describe("WhatsApp", () => {
  const FARMER = "+254733990003";

  it("asks 'reply 1 / 3'; '1' is recorded as helped, '9' refuses keeping photos", async () => {
    await whatsapp(FARMER, "", "diagnosed.jpg");
    const [answer, ask, notice] = await atLeast(() => whatsappTo(FARMER), 3, "three messages");
    const stored = (await h.records.store.lastFor(FARMER))!;
    expect(String(answer!.body.Body)).toContain(stored.code);
    expect(ask!.body.Body).toBe(
      t("sw", "feedback_ask", { yes: FARMER_REPLIES.helped, no: FARMER_REPLIES.wrong }),
    );
    expect(notice!.body.Body).toBe(t("sw", "consent_notice", { refuse: "9" }));

    await whatsapp(FARMER, FARMER_REPLIES.helped);
    const thanks = (await atLeast(() => whatsappTo(FARMER), 4, "thanks"))[3]!;
    expect(thanks.body.Body).toBe(t("sw", "feedback_thanks"));
    expect((await h.records.store.get(stored.result.request_id))?.feedback?.helped).toBe(true);
    expect((await h.records.reviews.list()).map((c) => c.stored.code)).not.toContain(stored.code);

    await whatsapp(FARMER, ` ${FARMER_REPLIES.refusePhotos}. `);
    const refused = (await atLeast(() => whatsappTo(FARMER), 5, "refusal"))[4]!;
    expect(refused.body.Body).toBe(t("sw", "consent_refused"));
    expect((await h.records.consent.get(FARMER))?.status).toBe("refused");
  }, 120_000);

  it("a last try that fails after the answer went out does not ask the farmer to send the photo again", async () => {
    const farmer = "+254733990006";
    const message = {
      provider: "twilio",
      channel: "whatsapp",
      messageId: `MM${"6".repeat(32)}`,
      from: farmer,
      to: TEST_CONFIG.twilio.whatsappFrom,
      owner: farmer,
      phone: farmer,
      media: { ref: `${h.standIn.baseUrl}/media/diagnosed.jpg`, contentType: "image/jpeg" },
      receivedAt: new Date().toISOString(),
    };
    // The answer goes through, Twilio fails the question after it, and this was the only try.
    h.standIn.failNext("twilio", 1, 500, 1, 1);
    await h.queue.queue.add(
      "inbound",
      { kind: "inbound", message },
      { jobId: inboundJobId(message), attempts: 1 },
    );
    await until(
      async () => (await h.queue.queue.getJobState(inboundJobId(message))) === "failed",
      "the job failing",
      30_000,
    );
    const stored = (await h.records.store.lastFor(farmer))!;
    const sends = whatsappTo(farmer).map((s) => ({ text: String(s.body.Body), refused: s.failedWith }));
    expect(sends).toHaveLength(2);
    expect(sends[0]!.text).toContain(stored.code);
    expect(sends[1]).toEqual({
      text: t("sw", "feedback_ask", { yes: FARMER_REPLIES.helped, no: FARMER_REPLIES.wrong }),
      refused: 500,
    });
  }, 60_000);
});
