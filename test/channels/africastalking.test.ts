import Fastify from "fastify";
import { ReplyError } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { africasTalkingWebhook } from "../../channels/africastalking/webhook.js";
import { createOutbox } from "../../channels/core/outbox.js";
import { ussdFits } from "../../channels/core/render/ussd.js";
import type { InboundMessage } from "../../channels/core/types.js";
import { FARMER_REPLIES } from "../../channels/limits.js";
import { FORGET_CONFIRM_SECONDS, LOW_CONFIDENCE } from "../../src/limits.js";
import type { StoredResult } from "../../src/results/types.js";
import { gsm7Letters, isGsm7 } from "../../src/text/sms-segments.js";
import { counting, loadCore } from "./support/core.js";
import { resultFixture } from "./support/fixtures.js";
import { type Harness, startHarness, TEST_CONFIG, untilIdle } from "./support/harness.js";

const TOKEN = TEST_CONFIG.africasTalking.webhookToken;
const FARMER = "+254712345678";

let h: Harness;
let core: Awaited<ReturnType<typeof loadCore>>;
let diagnoser: ReturnType<typeof counting>;
let stored: StoredResult;
let atId = 0;

const form = (fields: Record<string, string>) => ({
  headers: { "content-type": "application/x-www-form-urlencoded" },
  payload: new URLSearchParams(fields).toString(),
});

// Africa's Talking's USSD callback: every input of the session so far in `text`, joined by "*".
async function dial(text: string, phoneNumber = FARMER) {
  const res = await h.app.inject({
    method: "POST",
    url: `/channels/africastalking/${TOKEN}/ussd`,
    ...form({
      sessionId: `ATUid_${phoneNumber}`,
      serviceCode: "*384*1234#",
      phoneNumber,
      networkCode: "63902",
      text,
    }),
  });
  expect(res.statusCode).toBe(200);
  expect(res.headers["content-type"]).toMatch(/^text\/plain/);
  expect(res.body).toMatch(/^(CON|END) /);
  expect(ussdFits(res.body.slice("CON ".length))).toBe(true);
  return res.body;
}

// Africa's Talking's incoming-SMS callback.
function smsCallback(text: string, from: string, id = `ATXid_in_${++atId}`) {
  return h.app.inject({
    method: "POST",
    url: `/channels/africastalking/${TOKEN}/sms`,
    ...form({
      from,
      to: "21525",
      text,
      date: "2026-11-23 10:00:00",
      id,
      linkId: `link-${id}`,
      networkCode: "63902",
    }),
  });
}

async function sms(text: string, from = FARMER) {
  const sends = h.standIn.sends("africastalking").length;
  const res = await smsCallback(text, from);
  expect(res.statusCode).toBe(200);
  const reply = (await h.standIn.waitForSends("africastalking", sends + 1)).at(-1)!;
  expect(reply.headers.apikey).toBe(TEST_CONFIG.africasTalking.apiKey);
  // From the short code the farmer wrote to (the callback's `to`), so that they can answer it.
  expect(reply.body).toMatchObject({
    username: TEST_CONFIG.africasTalking.username,
    to: from,
    from: "21525",
  });
  return String(reply.body.message);
}

beforeAll(async () => {
  core = await loadCore();
  diagnoser = counting(core.diagnoser);
  h = await startHarness({ name: "at", diagnoser, knowledge: core.knowledge });
  h.startWorker();
  // A result that came from a REST partner in English at standard level, routed to this farmer.
  stored = await h.store.save({ result: resultFixture(), language: "en", owner: FARMER });
}, 120_000);

afterAll(async () => {
  await h?.close();
  await core?.diagnoser.close();
});

describe("USSD menu (answers from stored results only)", () => {
  it("walks the whole menu: last diagnosis, its treatment screen by screen, look-up by code, language", async () => {
    const menu = await dial("");
    expect(menu).toMatch(/^CON Daktari wa mazao\n1\. .+\n2\. .+\n3\. Lugha$/);

    const result = await dial("1");
    expect(result).toMatch(/^CON /);
    expect(result).toContain(`\nNamba: ${stored.code}\n`);
    expect(result).toContain(`${core.knowledge.name("tomato__late_blight", "sw")} (inaelekea).`);
    expect(result).toMatch(/1\. Matibabu\n0\. Rudi$/);

    // Treatment, screen after screen, until the last one ends the session.
    const screens: string[] = [];
    let path = "1*1";
    for (let i = 0; i < 12; i++) {
      const screen = await dial(path);
      screens.push(screen);
      if (screen.startsWith("END ")) break;
      expect(screen).toMatch(/1\. Endelea\n0\. Rudi$/);
      path += "*1";
    }
    expect(screens.at(-1)).toMatch(/^END /);
    const shown = screens.join("\n");
    for (const action of core.knowledge.treatment(["tomato__late_blight"], "sw", "simple")
      .immediate_actions) {
      expect(shown).toContain(action.slice(0, 20));
    }

    expect(await dial("1*0")).toBe(menu);
    expect(await dial("2")).toMatch(/^CON .*\n0\. Rudi$/);
    expect(await dial(`2*${stored.code.toLowerCase()}`)).toBe(result);
    expect(await dial("2*ZZ9ZZZ")).toMatch(/^CON Hakuna matokeo yenye namba ZZ9ZZZ\./);
    expect(await dial("9")).toMatch(/^CON Chaguo si sahihi\.\n/);

    const languages = await dial("3");
    expect(languages).toBe(
      "CON Chagua lugha:\n1.English\n2.Français\n3.Kiswahili\n4.Español\n5.Português\n6.Italiano",
    );
    expect(await dial("3*2")).toBe("END Langue choisie : Français.");
    expect(await dial("")).toMatch(/^CON Docteur des cultures\n/);
    // After choosing French, all of it is French: the stored English result too.
    const french = await dial("1");
    expect(french).toContain(`${core.knowledge.name("tomato__late_blight", "fr")} (probable).`);
    expect(french).toContain(`Code : ${stored.code}`);
    expect(french).not.toContain(core.knowledge.name("tomato__late_blight", "sw"));
    await h.languages.set(FARMER, "sw");
    expect(diagnoser.calls()).toBe(0);
  });

  it("looks a French-language result up in the caller's language, never with its stored texts", async () => {
    const caller = "+254733444555";
    const french = resultFixture();
    french.diagnoses[0]!.name = "Mildiou de la tomate";
    french.treatment.immediate_actions = ["Enlevez les feuilles malades"];
    const saved = await h.store.save({ result: french, language: "fr", owner: "+221770000000" });
    const screen = await dial(`2*${saved.code}`, caller);
    expect(screen).toContain(`${core.knowledge.name("tomato__late_blight", "sw")} (inaelekea).`);
    expect(screen).not.toMatch(/Mildiou|uhakika|%/);
    expect((await dial(`2*${saved.code}*1`, caller)).toLowerCase()).not.toContain("enlevez");
  });

  it("shows an extension officer's answer in place of the model's reading, screen after screen", async () => {
    const caller = "+254733888999";
    const saved = await h.store.save({ result: resultFixture(), language: "sw", owner: caller });
    const at = new Date().toISOString();
    await h.store.setState(saved.result.request_id, "review", {
      reasons: ["farmer_said_wrong"],
      queuedAt: at,
    });
    await h.store.setState(saved.result.request_id, "decision", {
      kind: "corrected",
      classId: "maize__common_rust",
      officer: "wanjiru",
      at,
    });
    const name = core.knowledge.name("maize__common_rust", "sw");
    const first = await dial(`2*${saved.code}`, caller);
    expect(first).toContain(name);
    expect(first).not.toContain(core.knowledge.name("tomato__late_blight", "sw"));
    expect(first).toMatch(/1\. Endelea\n0\. Rudi$/);
    expect(await dial(`2*${saved.code}*7`, caller)).toMatch(/^CON Chaguo si sahihi\.\n/);
    const screens = [first];
    let path = `2*${saved.code}`;
    for (let i = 0; i < 12 && !screens.at(-1)!.startsWith("END "); i++) {
      path += "*1";
      screens.push(await dial(path, caller));
    }
    expect(screens.at(-1)).toMatch(/^END [\s\S]*Namba: /);
    const shown = screens.join("\n");
    const [action] = core.knowledge.treatment(["maize__common_rust"], "sw", "simple").immediate_actions;
    expect(shown).toContain(action!.slice(0, 20));
  });

  it("'my last diagnosis' is the last real one, not a later photo that could not be answered", async () => {
    const caller = "+254733666777";
    const real = await h.store.save({ result: resultFixture(), language: "sw", owner: caller });
    const blurry = resultFixture({
      outcome: "diagnosed",
      image_analysis: { is_plant: true, quality_issue: "blurry", detected_crop: null },
    });
    const unsure = resultFixture({
      outcome: "unsure",
      crop_health: "unknown",
      diagnoses: [],
      candidates: [],
    });
    await h.store.save({ result: blurry, language: "sw", owner: caller });
    await h.store.save({ result: unsure, language: "sw", owner: caller });
    expect(await dial("1", caller)).toContain(`Namba: ${real.code}`);
  });

  it("a form that is not Africa's Talking's shape: 200 with a screen that closes, and a log line", async () => {
    const logged = h.logs.length;
    const res = await h.app.inject({
      method: "POST",
      url: `/channels/africastalking/${TOKEN}/ussd`,
      ...form({ sessionId: "ATUid_x", serviceCode: "*384*1234#", text: "1" }),
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe("END Sorry, something went wrong. Please dial again.");
    const sms = await h.app.inject({
      method: "POST",
      url: `/channels/africastalking/${TOKEN}/sms`,
      ...form({ to: "21525", text: "malformed callback", date: "2026-11-23 10:00:00" }),
    });
    expect(sms.statusCode).toBe(200);
    expect(await h.queuedText("malformed callback")).toBe(false);
    const ignored = h.logs
      .slice(logged)
      .filter((line) => line.includes("africastalking webhook body ignored"));
    expect(ignored).toHaveLength(2);
  });

  it("apologises for a malformed request in the caller's language when its phone number is readable", async () => {
    const malformed = (fields: Record<string, string>) =>
      h.app.inject({
        method: "POST",
        url: `/channels/africastalking/${TOKEN}/ussd`,
        // No sessionId: not Africa's Talking's shape.
        ...form({ serviceCode: "*384*1234#", text: "1", ...fields }),
      });
    const apology = (language: "en" | "sw" | "fr" | "pt") =>
      `END ${h.renderer.texts(language, "ussd.error")}`;

    // Kenya (+254) reads Swahili first, as the menu would greet this caller.
    expect((await malformed({ phoneNumber: "+254700111222" })).body).toBe(apology("sw"));
    // The caller's own pick wins over the country, as in the menu.
    await h.languages.set("+254700111333", "fr");
    expect((await malformed({ phoneNumber: "+254700111333" })).body).toBe(apology("fr"));
    expect((await malformed({ phoneNumber: "+258841234567", text: "" })).body).toBe(apology("pt"));
    // No readable number: the default.
    expect((await malformed({ phoneNumber: "not a number" })).body).toBe(apology("en"));
    expect((await malformed({})).body).toBe(apology("en"));
    const unreadable = await h.app.inject({
      method: "POST",
      url: `/channels/africastalking/${TOKEN}/ussd`,
      headers: { "content-type": "application/json" },
      payload: "{",
    });
    expect(unreadable.statusCode).toBe(200);
    expect(unreadable.body).toBe(apology("en"));
  });

  it("pages French with ô and â: a page keeps its accents in 80 UCS-2 units, or goes in GSM-7 letters", async () => {
    const caller = "+221771234567";
    // Common rust's French treatment has "tôt" and "mâles": letters outside GSM-7.
    const rust = resultFixture();
    rust.diagnoses[0]!.id = "maize__common_rust";
    await h.store.save({ result: rust, language: "fr", owner: caller });
    const screens: string[] = [];
    let path = "1*1";
    for (let i = 0; i < 30; i++) {
      const screen = await dial(path, caller);
      screens.push(screen);
      if (screen.startsWith("END ")) break;
      expect(screen).toMatch(/1\. Suite\n0\. Retour$/);
      path += "*1";
    }
    expect(screens.at(-1)).toMatch(/^END /);
    const treatment = core.knowledge.treatment(["maize__common_rust"], "fr", "simple");
    const shown = screens
      .map((screen) => screen.slice(4))
      .join(" ")
      .replace(/\n/g, " ");
    for (const action of treatment.immediate_actions) expect(shown).toContain(gsm7Letters(action));
    // dial() checked each screen against its encoding's limit: UCS-2 screens hold 80 units; the longer ones
    // went in GSM-7 letters ("tôt" → "tot"), fewer screens to page through than 80 characters each.
    for (const screen of screens) if (!isGsm7(screen)) expect(screen.length - 4).toBeLessThanOrEqual(80);
    expect(shown).toContain("tot");
    expect(screens.length).toBeLessThanOrEqual(5);
  });

  it("says an officer will look at a result in the review queue, as the chat and SMS answers do", async () => {
    const caller = "+254700555666";
    // Named, but less sure than the review queue's bar: an officer will look at it.
    const doubtful = resultFixture();
    doubtful.diagnoses[0]!.confidence = LOW_CONFIDENCE / 2;
    const stored = await h.records.record(doubtful, { language: "sw", owner: caller, source: "sms" });
    expect(stored.review).toBeDefined();
    const screens: string[] = [];
    for (let path = `2*${stored.code}*1`; screens.length < 10; path += "*1") {
      screens.push(await dial(path, caller));
      if (screens.at(-1)!.startsWith("END ")) break;
    }
    const shown = screens
      .map((s) => s.slice(4))
      .join(" ")
      .replace(/\n/g, " ");
    expect(gsm7Letters(shown)).toContain(gsm7Letters(h.renderer.texts("sw", "officer")));
  });

  it("says so when the caller has no diagnosis yet", async () => {
    expect(await dial("1", "+254700999999")).toBe(
      "END Bado hakuna uchunguzi. Tuma kwanza picha ya jani lenye ugonjwa.",
    );
  });
});

describe("SMS commands", () => {
  const reader = "+254722000111";

  it("a code gets the summary, the code and 2 the treatment", async () => {
    const name = core.knowledge.name("tomato__late_blight", "sw");
    const summary = await sms(stored.code, reader);
    expect(summary.startsWith(`${name} (inaelekea). `)).toBe(true);
    expect(summary).toContain(
      core.knowledge.treatment(["tomato__late_blight"], "sw", "simple").immediate_actions[0],
    );
    expect(summary.endsWith(`\nMatibabu: tuma ${stored.code} 2`)).toBe(true);

    for (const asked of [`${stored.code} 2`, `${stored.code.toLowerCase()}2`]) {
      const treatment = await sms(asked, reader);
      expect(treatment.startsWith(`${name}. La kufanya: `)).toBe(true);
      expect(treatment.endsWith(`Namba ya matokeo: ${stored.code}`)).toBe(true);
    }
  });

  it("a 2 alone gets the last answer's treatment, as its tail offered; 3, not 2, says it was wrong", async () => {
    const name = core.knowledge.name("tomato__late_blight", "sw");
    // The farmer's own last answer (FARMER's, saved above): its summary ended "tuma <code> 2".
    const treatment = await sms("2", FARMER);
    expect(treatment.startsWith(`${name}. La kufanya: `)).toBe(true);
    expect(treatment.endsWith(`Namba ya matokeo: ${stored.code}`)).toBe(true);
    expect((await h.store.get(stored.result.request_id))?.feedback).toBeUndefined();
    // Nothing answered yet: said so, not help.
    const newcomer = "+254722000999";
    expect(await sms("2", newcomer)).toBe(h.renderer.texts("sw", "no_result"));
    // A code looked up (a neighbour's): the 2 alone is for that summary, the one just sent.
    const other = await h.store.save({ result: resultFixture(), language: "en", owner: "+254722000888" });
    await h.store.setShown(newcomer, other.result.request_id);
    await sms(stored.code, newcomer);
    expect((await sms("2", newcomer)).endsWith(`Namba ya matokeo: ${stored.code}`)).toBe(true);
    expect(FARMER_REPLIES.wrong).not.toBe("2");
  });

  it("0 sent twice deletes everything kept about the farmer; once, it only says what would go", async () => {
    const farmer = "+254722333444";
    const mine = await h.records.record(resultFixture(), { language: "sw", owner: farmer, source: "sms" });
    await h.languages.set(farmer, "en");
    expect(await sms(FARMER_REPLIES.forget, farmer)).toBe(
      h.renderer.texts("en", "forget_confirm", { minutes: FORGET_CONFIRM_SECONDS / 60 }),
    );
    expect(await h.store.getByCode(mine.code)).toBeDefined();
    expect(await sms(` ${FARMER_REPLIES.forget}.`, farmer)).toBe(h.renderer.texts("en", "forgotten"));
    expect(await h.store.getByCode(mine.code)).toBeUndefined();
    expect(await h.store.listFor(farmer)).toEqual([]);
    // Their language went too: the number's country speaks again (Kenya: Swahili).
    expect(await h.languages.resolve(farmer, { phone: farmer })).toBe("sw");
    // A later 0 starts over: asked again, nothing deleted without the second.
    expect(await sms(FARMER_REPLIES.forget, farmer)).toBe(
      h.renderer.texts("sw", "forget_confirm", { minutes: FORGET_CONFIRM_SECONDS / 60 }),
    );
  });

  it("words a farmer may text are not codes: they get help", async () => {
    for (const word of ["ASANTE", "asante sana", "MERCI", "Grazie", "GRAZIE 2", "OBRIGADO"])
      expect(await sms(word, reader)).toMatch(/^Tuma picha safi/);
  });

  it("HELP, LANG and language names", async () => {
    expect(await sms("HELP", reader)).toMatch(/^Tuma picha safi/);

    expect(await sms("ENGLISH", reader)).toBe("Language set to English.");
    expect(await sms("what?", reader)).toMatch(/^Send a clear photo/);
    expect(await sms("lang es", reader)).toBe("Idioma cambiado a Español.");
    expect(await sms("KISWAHILI", reader)).toBe("Lugha imewekwa: Kiswahili.");
    expect(await sms("Français", reader)).toBe("Langue choisie : Français.");
    expect(await sms("QQ9-QQQ", reader)).toBe("Aucun résultat avec le code QQ9QQQ.");
    expect(diagnoser.calls()).toBe(0);
  });

  it("processes a replayed callback (same id) once", async () => {
    const sends = h.standIn.sends("africastalking").length;
    const from = "+254733111222";
    // Africa's Talking retries a callback that got no 200 in time: the same id.
    expect((await smsCallback("HELP", from, "ATXid_replayed_1")).statusCode).toBe(200);
    expect((await smsCallback("HELP", from, "ATXid_replayed_1")).statusCode).toBe(200);
    await h.standIn.waitForSends("africastalking", sends + 1);
    await untilIdle(h);
    expect((await smsCallback("HELP", from, "ATXid_replayed_1")).statusCode).toBe(200);
    await untilIdle(h);
    expect(h.standIn.sends("africastalking")).toHaveLength(sends + 1);
    expect(await h.queue.queue.getJobState("africastalking_ATXid_replayed_1")).toBe("completed");
  });
});

describe("an SMS Redis would not take", () => {
  it("is answered 200, kept, and queued on the outbox's next try, with no reconnect to wait for", async () => {
    const app = Fastify({ logger: false });
    const queued: InboundMessage[] = [];
    let refusals = 1;
    let landed: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      landed = resolve;
    });
    // A failover: the connection stays up while the old primary refuses writes, once.
    const enqueue = async (message: InboundMessage) => {
      if (refusals-- > 0) throw new ReplyError("READONLY You can't write against a read only replica.");
      queued.push(message);
      landed();
    };
    const outbox = createOutbox({ redis: h.redis, enqueue, logger: app.log });
    await app.register(africasTalkingWebhook, {
      webhookToken: TOKEN,
      allowedIps: [],
      enqueue,
      outbox,
      gate: (work) => work(),
      ussd: { store: h.store, languages: h.languages, texts: (_l, key) => key, knowledge: core.knowledge },
    });
    const res = await app.inject({
      method: "POST",
      url: `/channels/africastalking/${TOKEN}/sms`,
      ...form({
        from: FARMER,
        to: "21525",
        text: "HELP",
        date: "2026-11-23 10:00:00",
        id: "ATXid_readonly_1",
      }),
    });
    expect(res.statusCode).toBe(200);
    expect(outbox.size).toBe(1);
    await done;
    expect(queued.map((m) => m.messageId)).toEqual(["ATXid_readonly_1"]);
    await app.close();
  }, 15_000);
});

describe("a USSD request whose menu fails", () => {
  it("gets the closing 'busy' screen, not an HTTP error, when Redis refuses a write in a failover", async () => {
    const app = Fastify({ logger: false });
    const readOnly = async () => {
      throw new ReplyError("READONLY You can't write against a read only replica.");
    };
    await app.register(africasTalkingWebhook, {
      webhookToken: TOKEN,
      allowedIps: [],
      enqueue: async () => {},
      outbox: createOutbox({ redis: h.redis, enqueue: async () => {}, logger: app.log }),
      gate: (work) => work(),
      ussd: {
        store: h.store,
        languages: { resolve: readOnly, set: readOnly, forget: readOnly },
        texts: (_l, key) => key,
        knowledge: core.knowledge,
      },
    });
    const res = await app.inject({
      method: "POST",
      url: `/channels/africastalking/${TOKEN}/ussd`,
      ...form({ sessionId: "s-readonly", serviceCode: "*384*123#", phoneNumber: FARMER, text: "" }),
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe("END busy");
    await app.close();
  });
});

describe("the outbox", () => {
  it("does not let one message Redis keeps refusing hold up the ones after it", async () => {
    const message = (id: string): InboundMessage => ({
      provider: "africastalking",
      channel: "sms",
      messageId: id,
      from: FARMER,
      owner: FARMER,
      to: "21525",
      text: "HELP",
      receivedAt: new Date().toISOString(),
    });
    let landed: (id: string) => void = () => {};
    const queued = new Promise<string>((resolve) => {
      landed = resolve;
    });
    const outbox = createOutbox({
      redis: h.redis,
      enqueue: async (m) => {
        if (m.messageId === "ATXid_refused_always") throw new ReplyError("ERR refused");
        landed(m.messageId);
      },
      logger: Fastify({ logger: false }).log,
    });
    outbox.keep(message("ATXid_refused_always"), "test");
    outbox.keep(message("ATXid_behind_it"), "test");
    expect(await queued).toBe("ATXid_behind_it");
    expect(outbox.size).toBe(1);
  }, 20_000);
});

describe("webhook protection", () => {
  it("refuses a wrong token with 403", async () => {
    for (const kind of ["sms", "ussd"]) {
      const res = await h.app.inject({
        method: "POST",
        url: `/channels/africastalking/wrong-token-0123456789/${kind}`,
        ...form({ text: "" }),
      });
      expect(res.statusCode).toBe(403);
    }
    expect(h.logs.join("\n")).not.toContain(TOKEN);
  });

  it("keeps the token out of the log lines of a path or method it does not serve (404)", async () => {
    const before = h.logs.length;
    for (const [method, path] of [
      ["GET", "/sms"],
      ["POST", "/voice"],
      ["POST", "/ussd/extra"],
      ["GET", ""],
      ["GET", "?q=1"],
    ] as const) {
      const res = await h.app.inject({
        method,
        url: `/channels/africastalking/${TOKEN}${path}`,
        ...form({}),
      });
      expect(res.statusCode, `${method} ${path}`).toBe(404);
      expect(res.body).not.toContain(TOKEN);
    }
    const lines = h.logs.slice(before).join("\n");
    expect(lines).toContain("/channels/africastalking/[redacted]/");
    expect(lines).not.toContain(TOKEN);
  });

  it("applies the IP allow-list", async () => {
    const app = Fastify({ logger: false });
    await app.register(africasTalkingWebhook, {
      webhookToken: TOKEN,
      allowedIps: ["10.0.0.0/8", "192.0.2.7"],
      enqueue: async () => {},
      outbox: { keep: () => false, size: 0 },
      gate: (work) => work(),
      ussd: { store: h.store, languages: h.languages, texts: (_l, key) => key, knowledge: core.knowledge },
    });
    const call = (remoteAddress: string) =>
      app.inject({
        method: "POST",
        url: `/channels/africastalking/${TOKEN}/ussd`,
        remoteAddress,
        ...form({ phoneNumber: FARMER, text: "" }),
      });
    expect((await call("10.20.30.40")).statusCode).toBe(200);
    expect((await call("192.0.2.7")).statusCode).toBe(200);
    expect((await call("127.0.0.1")).statusCode).toBe(403);
    await app.close();
  });
});
