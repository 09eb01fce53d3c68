import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { languageButtons } from "../../channels/core/actions.js";
import { isAnswer, viewOf } from "../../channels/core/render/view.js";
import { counting, leafPhoto, loadCore } from "./support/core.js";
import { resultFixture } from "./support/fixtures.js";
import { type Harness, startHarness, TEST_CONFIG, untilIdle } from "./support/harness.js";

const { botToken, webhookSecret } = TEST_CONFIG.telegram;
const CHAT = 777_001;

let h: Harness;
let core: Awaited<ReturnType<typeof loadCore>>;
let updateId = 40_000;

function post(update: object, secret: string | null = webhookSecret) {
  return h.app.inject({
    method: "POST",
    url: "/channels/telegram",
    headers: {
      "content-type": "application/json",
      ...(secret ? { "x-telegram-bot-api-secret-token": secret } : {}),
    },
    payload: JSON.stringify(update),
  });
}

// Telegram's Update objects, as the Bot API posts them to a webhook.
const from = { id: CHAT, is_bot: false, first_name: "Amina", language_code: "fr" };
const chat = { id: CHAT, first_name: "Amina", type: "private" };
const photoUpdate = () => ({
  update_id: ++updateId,
  message: {
    message_id: updateId,
    from,
    chat,
    date: 1_763_892_000,
    caption: "ma tomate",
    photo: [
      { file_id: "leaf-small", file_unique_id: "AQADs", file_size: 1_204, width: 90, height: 73 },
      { file_id: "leaf-big", file_unique_id: "AQADb", file_size: 48_213, width: 800, height: 650 },
    ],
  },
});

beforeAll(async () => {
  core = await loadCore();
  h = await startHarness({
    name: "telegram",
    diagnoser: counting(core.diagnoser),
    knowledge: core.knowledge,
  });
  h.startWorker();
  h.standIn.media.set("leaf-big", await leafPhoto(3));
}, 120_000);

afterAll(async () => {
  await h?.close();
  await core?.diagnoser.close();
});

describe("Telegram webhook → queue → worker → sendMessage", () => {
  it("shows typing, then answers a photo with the diagnosis, without logging the token", async () => {
    const res = await post(photoUpdate());
    expect(res.statusCode).toBe(200);
    const [send] = await h.standIn.waitForSends("telegram", 1, 60_000);
    const stored = await h.resultOf(`telegram_${updateId}`);
    expect(stored?.language).toBe("fr");
    expect(send!.path).toBe(`/bot${botToken}/sendMessage`);
    const view = viewOf(stored!, "fr", core.knowledge);
    expect(send!.body).toMatchObject({
      chat_id: String(CHAT),
      parse_mode: "HTML",
      text: h.renderer.result(view, "fr", h.capabilities("telegram", "telegram")),
    });
    // "typing" went out while the photo was diagnosed, before the answer.
    const typing = h.standIn.requests.find((r) => r.path.endsWith("/sendChatAction"));
    expect(typing?.body).toMatchObject({ chat_id: String(CHAT), action: "typing" });
    expect(typing!.at).toBeLessThanOrEqual(send!.at);
    // An answer carries the buttons that show it again in another language; "take another photo" none.
    const keyboard = send!.body.reply_markup as {
      inline_keyboard: { text: string; callback_data: string }[][];
    };
    if (isAnswer(view))
      expect(keyboard.inline_keyboard).toEqual(
        languageButtons({ result: view.code }).map((row) =>
          row.map(({ text, data }) => ({ text, callback_data: data })),
        ),
      );
    else expect(keyboard).toBeUndefined();
    // The largest size was fetched through getFile; the token-bearing file URL reached no log line.
    expect(h.standIn.requests.some((r) => r.path === `/file/bot${botToken}/photos/leaf-big`)).toBe(true);
    expect(h.logs.join("\n")).not.toContain(botToken);
  }, 90_000);

  it("switches language from the inline keyboard", async () => {
    const sends = h.standIn.sends("telegram").length;
    const res = await post({
      update_id: ++updateId,
      callback_query: {
        id: "4382bfdwdsb323b2d9",
        from,
        message: { message_id: 1, chat, date: 1_763_892_000, text: "..." },
        chat_instance: "-1",
        data: "lang:sw",
      },
    });
    expect(res.statusCode).toBe(200);
    const reply = (await h.standIn.waitForSends("telegram", sends + 1)).at(-1)!;
    expect(reply.body.text).toBe("Lugha imewekwa: Kiswahili.");
    expect(
      h.standIn.requests.some(
        (r) => r.path.endsWith("/answerCallbackQuery") && r.body.callback_query_id === "4382bfdwdsb323b2d9",
      ),
    ).toBe(true);
    expect(await h.languages.resolve(`tg:${CHAT}`, { tag: "fr" })).toBe("sw");
  });

  it("a language button under an answer sends that answer again in the chosen language", async () => {
    const sends = h.standIn.sends("telegram").length;
    const stored = await h.store.save({ result: resultFixture(), language: "fr", owner: `tg:${CHAT}` });
    await post({
      update_id: ++updateId,
      callback_query: {
        id: "4382bfdwdsb323b2e0",
        from,
        message: { message_id: 2, chat, date: 1_763_892_000, text: "..." },
        chat_instance: "-1",
        data: `lang:sw:${stored.code}`,
      },
    });
    const reply = (await h.standIn.waitForSends("telegram", sends + 1)).at(-1)!;
    const view = viewOf(stored, "sw", core.knowledge);
    expect(reply.body.text).toBe(h.renderer.result(view, "sw", h.capabilities("telegram", "telegram")));
    expect(String(reply.body.text)).toContain(
      `${core.knowledge.name("tomato__late_blight", "sw")} (inaelekea).`,
    );
    const keyboard = reply.body.reply_markup as { inline_keyboard: { callback_data: string }[][] };
    expect(keyboard.inline_keyboard.flat().map((b) => b.callback_data)).toContain(`lang:pt:${stored.code}`);
    expect(await h.languages.resolve(`tg:${CHAT}`, { tag: "fr" })).toBe("sw");
  });

  it("answers a button pressed on a message too old to be included, in the presser's chat", async () => {
    const sends = h.standIn.sends("telegram").length;
    const presser = { id: 777_002, is_bot: false, first_name: "Baraka", language_code: "sw" };
    // Telegram leaves `message` out when the message with the button is too old.
    const res = await post({
      update_id: ++updateId,
      callback_query: { id: "5382bfdwdsb323b2e1", from: presser, chat_instance: "-2", data: "lang:it" },
    });
    expect(res.statusCode).toBe(200);
    const reply = (await h.standIn.waitForSends("telegram", sends + 1)).at(-1)!;
    expect(reply.body).toMatchObject({ chat_id: String(presser.id), text: "Lingua impostata: Italiano." });
    expect(
      h.standIn.requests.some(
        (r) => r.path.endsWith("/answerCallbackQuery") && r.body.callback_query_id === "5382bfdwdsb323b2e1",
      ),
    ).toBe(true);

    // A button of an older keyboard this version does not know: answered too, and the user gets help.
    await post({
      update_id: ++updateId,
      callback_query: { id: "5382bfdwdsb323b2e2", from: presser, chat_instance: "-2", data: "page:2" },
    });
    const help = (await h.standIn.waitForSends("telegram", sends + 2)).at(-1)!;
    expect(help.body.chat_id).toBe(String(presser.id));
    expect(String(help.body.text)).toMatch(/^Invia una foto nitida/);
    expect(
      h.standIn.requests.some(
        (r) => r.path.endsWith("/answerCallbackQuery") && r.body.callback_query_id === "5382bfdwdsb323b2e2",
      ),
    ).toBe(true);
  });

  it("processes a replayed update (same update_id) once", async () => {
    const sends = h.standIn.sends("telegram").length;
    const update = {
      update_id: ++updateId,
      message: { message_id: 11, from, chat, date: 1_763_892_000, text: "habari" },
    };
    // Telegram re-sends an update it got no 2xx for in time: the same update_id, the same body.
    expect((await post(update)).statusCode).toBe(200);
    expect((await post(update)).statusCode).toBe(200);
    await h.standIn.waitForSends("telegram", sends + 1);
    await untilIdle(h);
    expect((await post(update)).statusCode).toBe(200);
    await untilIdle(h);
    expect(h.standIn.sends("telegram")).toHaveLength(sends + 1);
    expect(await h.queue.queue.getJobState(`telegram_${update.update_id}`)).toBe("completed");
  });

  it("acts on nothing from a group chat, where its members would share one farmer's results and consent", async () => {
    const sends = h.standIn.sends("telegram").length;
    const group = { id: -100_555_001, title: "Wakulima wa Nakuru", type: "supergroup" };
    const update = {
      update_id: ++updateId,
      message: { message_id: 12, from, chat: group, date: 1_763_892_000, text: "9" },
    };
    expect((await post(update)).statusCode).toBe(200);
    await untilIdle(h);
    expect(await h.queue.queue.getJob(`telegram_${update.update_id}`)).toBeUndefined();
    expect(h.standIn.sends("telegram")).toHaveLength(sends);
  });

  it("greets /start in the remembered language and says what to send, with the language buttons", async () => {
    const sends = h.standIn.sends("telegram").length;
    await post({
      update_id: ++updateId,
      message: { message_id: 9, from, chat, date: 1_763_892_000, text: "/start" },
    });
    const reply = (await h.standIn.waitForSends("telegram", sends + 1)).at(-1)!;
    expect(String(reply.body.text)).toMatch(/^Habari! Mimi ni daktari wa mazao\. Nitumie picha safi/);
    const keyboard = reply.body.reply_markup as { inline_keyboard: { callback_data: string }[][] };
    expect(keyboard.inline_keyboard.flat().map((b) => b.callback_data)).toContain("lang:fr:welcome");
  });

  it("a signed update that is not Telegram's shape gets 200, one log line, and nothing queued", async () => {
    const logged = h.logs.length;
    // A message without its chat, an update id that is not a number, a body that is not JSON.
    const text = "malformed update";
    for (const payload of [
      JSON.stringify({ update_id: ++updateId, message: { message_id: 1, date: 0, text } }),
      JSON.stringify({ update_id: "soon", message: { message_id: 1, chat, date: 0, text } }),
      `{"update_id": 1, "message": {"text": "${text}"`,
    ]) {
      const res = await h.app.inject({
        method: "POST",
        url: "/channels/telegram",
        headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": webhookSecret },
        payload,
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ ok: true });
    }
    expect(await h.queuedText(text)).toBe(false);
    const warnings = h.logs
      .slice(logged)
      .map((line) => JSON.parse(line) as { level: number; msg: string; problem?: string })
      .filter((line) => line.level >= 40);
    expect(warnings.map((w) => w.msg)).toEqual(
      Array(3).fill("telegram webhook body ignored: not the provider's shape"),
    );
    expect(warnings[0]!.problem).toMatch(/chat/);
  });

  it("refuses a wrong or missing secret token with 403", async () => {
    expect((await post(photoUpdate(), "not-the-secret")).statusCode).toBe(403);
    expect((await post(photoUpdate(), null)).statusCode).toBe(403);
    expect(h.logs.join("\n")).toContain("telegram webhook refused");
    expect(h.logs.join("\n")).not.toContain(webhookSecret);
  });
});
