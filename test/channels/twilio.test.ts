import twilio from "twilio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inboundJobId } from "../../channels/core/queue.js";
import { isAnswer, viewOf } from "../../channels/core/render/view.js";
import { isTwilioMediaHost } from "../../channels/twilio/send.js";
import type { Knowledge } from "../../src/diagnosis/kb.js";
import { awaitsOfficer } from "../../src/review/queue.js";
import { countSegments } from "../../src/text/sms-segments.js";
import { counting, leafPhoto, loadCore } from "./support/core.js";
import { type Harness, PUBLIC_BASE_URL, startHarness, TEST_CONFIG, untilIdle } from "./support/harness.js";

const { accountSid, authToken } = TEST_CONFIG.twilio;
const FARMER = "+254712345678";

let h: Harness;
let core: Awaited<ReturnType<typeof loadCore>>;
let diagnoser: ReturnType<typeof counting>;
let knowledge: Knowledge;
let sid = 0;

// Twilio's messaging webhook, field for field (form-encoded), for a WhatsApp photo or an SMS/MMS. Message
// SIDs start with SM for a text, MM for a message with media.
function twilioForm(fields: {
  from: string;
  to: string;
  body?: string;
  mediaUrl?: string;
  whatsapp?: boolean;
}) {
  const messageSid = `${fields.mediaUrl ? "MM" : "SM"}${String(++sid).padStart(32, "0")}`;
  const media = fields.mediaUrl
    ? { NumMedia: "1", MediaContentType0: "image/jpeg", MediaUrl0: fields.mediaUrl }
    : { NumMedia: "0" };
  const prefix = fields.whatsapp ? "whatsapp:" : "";
  return {
    SmsMessageSid: messageSid,
    SmsSid: messageSid,
    MessageSid: messageSid,
    AccountSid: accountSid,
    MessagingServiceSid: "",
    From: `${prefix}${fields.from}`,
    To: `${prefix}${fields.to}`,
    Body: fields.body ?? "",
    NumSegments: "1",
    SmsStatus: "received",
    ApiVersion: "2010-04-01",
    ...(fields.whatsapp
      ? {
          ProfileName: "Wanjiku",
          WaId: fields.from.slice(1),
          MessageType: fields.mediaUrl ? "image" : "text",
        }
      : {}),
    ...media,
  } as Record<string, string>;
}

function post(
  form: Record<string, string>,
  signature = twilio.getExpectedTwilioSignature(authToken, `${PUBLIC_BASE_URL}/channels/twilio`, form),
) {
  return h.app.inject({
    method: "POST",
    url: "/channels/twilio",
    headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature },
    payload: new URLSearchParams(form).toString(),
  });
}

beforeAll(async () => {
  core = await loadCore();
  diagnoser = counting(core.diagnoser);
  knowledge = core.knowledge;
  h = await startHarness({ name: "twilio", diagnoser, knowledge });
  h.startWorker();
  h.standIn.media.set("leaf1.jpg", await leafPhoto(1));
  h.standIn.media.set("leaf2.jpg", await leafPhoto(2));
}, 120_000);

afterAll(async () => {
  await h?.close();
  await core?.diagnoser.close();
});

describe("Twilio request signatures (the SDK's validateRequest, as the webhook uses it)", () => {
  // Twilio's worked example: this URL, these parameters, auth token 12345. The phone numbers differ between
  // editions of Twilio's docs and SDK tests, and so does the signature; each pair is checked as published.
  const url = "https://mycompany.com/myapp.php?foo=1&bar=2";
  const params = (phone: string) => ({
    CallSid: "CA1234567890ABCDE",
    Caller: phone,
    Digits: "1234",
    From: phone,
    To: "+18005551212",
  });

  it.each([
    ["+12349013030", "0/KCTR6DLpKmkAf8muzZqo1nDgQ=", "twilio.com/docs/usage/webhooks/webhooks-security"],
    ["+14158675310", "GvWf1cFY/Q7PnoempGyD5oXAezc=", "the earlier twilio.com/docs/usage/security"],
    ["+14158675309", "RSOYDt4T1cUTdK1PDd93/VVr8B8=", "twilio-php and twilio-csharp RequestValidator tests"],
  ])("%s signs as %s (%s)", (phone, signature) => {
    expect(twilio.getExpectedTwilioSignature("12345", url, params(phone))).toBe(signature);
    expect(twilio.validateRequest("12345", signature, url, params(phone))).toBe(true);
    expect(twilio.validateRequest("12345", signature, url, { ...params(phone), Digits: "1235" })).toBe(false);
    expect(twilio.validateRequest("12346", signature, url, params(phone))).toBe(false);
    expect(twilio.validateRequest("12345", signature, url.replace("bar=2", "bar=3"), params(phone))).toBe(
      false,
    );
  });
});

describe("Twilio webhook → queue → worker → messages.create", () => {
  it("answers a WhatsApp photo with the rendered diagnosis, in the farmer's language", async () => {
    const form = twilioForm({
      from: FARMER,
      to: "+14155238886",
      whatsapp: true,
      mediaUrl: `${h.standIn.baseUrl}/media/leaf1.jpg`,
    });
    const started = performance.now();
    const res = await post(form);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/text\/xml/);
    expect(res.body).toContain("<Response></Response>");

    const [send] = await h.standIn.waitForSends("twilio", 1, 60_000);
    const stored = await h.resultOf(inboundJobId({ provider: "twilio", messageId: form.MessageSid! }));
    expect(stored).toBeDefined();
    // Kenya → Swahili on first contact; simple level, re-rendered the one way the renderer does it.
    expect(stored!.language).toBe("sw");
    expect(send!.path).toBe(`/2010-04-01/Accounts/${accountSid}/Messages.json`);
    expect(send!.body).toMatchObject({ From: "whatsapp:+14155238886", To: `whatsapp:${FARMER}` });
    const view = viewOf(stored!, "sw", knowledge, { officerReview: awaitsOfficer });
    expect(send!.body.Body).toBe(h.renderer.result(view, "sw", h.capabilities("twilio", "whatsapp")));
    // What the real model makes of a synthetic leaf varies from model to model; an answer carries its look-up
    // code, a request to retake the photo does not (render.test.ts pins both).
    if (isAnswer(view)) expect(String(send!.body.Body)).toContain(stored!.code);
    else expect(String(send!.body.Body)).not.toContain(stored!.code);

    // The photo was fetched with the account's basic auth; the result is also under its short code.
    const mediaGet = h.standIn.requests.find((r) => r.path === "/media/leaf1.jpg");
    expect(mediaGet?.headers.authorization).toBe(
      `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString("base64")}`,
    );
    expect((await h.store.getByCode(stored!.code))?.result.request_id).toBe(stored!.result.request_id);
  }, 90_000);

  it("a signed form that is not Twilio's shape gets empty TwiML, one log line, and nothing queued", async () => {
    const logged = h.logs.length;
    const good = twilioForm({ from: FARMER, to: "+15005550006", body: "malformed form" });
    const { From: _from, ...noFrom } = good;
    for (const form of [noFrom, { ...good, MessageSid: "not-a-sid" }, { ...good, NumMedia: "many" }]) {
      const res = await post(form);
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain("<Response></Response>");
    }
    expect(await h.queuedText("malformed form")).toBe(false);
    const ignored = h.logs.slice(logged).filter((line) => line.includes("twilio webhook body ignored"));
    expect(ignored).toHaveLength(3);
    // The same form unsigned is still refused: shape is checked only for what Twilio signed.
    expect((await post(noFrom, "forged")).statusCode).toBe(403);
  });

  it("diagnoses a replayed webhook once", async () => {
    const before = { calls: diagnoser.calls(), sends: h.standIn.sends("twilio").length };
    const form = twilioForm({
      from: "+254700000001",
      to: "+14155238886",
      whatsapp: true,
      mediaUrl: `${h.standIn.baseUrl}/media/leaf2.jpg`,
    });
    // Twilio retries a webhook it thinks timed out: same MessageSid, same signature.
    const first = await post(form);
    const second = await post(form);
    expect([first.statusCode, second.statusCode]).toEqual([200, 200]);
    await h.standIn.waitForSends("twilio", before.sends + 1, 60_000);
    await untilIdle(h);
    // ... and again after the job completed.
    expect((await post(form)).statusCode).toBe(200);
    await untilIdle(h);
    expect(diagnoser.calls() - before.calls).toBe(1);
    expect(h.standIn.sends("twilio").length - before.sends).toBe(1);
    expect(
      await h.queue.queue.getJobState(inboundJobId({ provider: "twilio", messageId: form.MessageSid! })),
    ).toBe("completed");
  }, 90_000);

  it("refuses a bad signature with 403 and logs no secret", async () => {
    const form = twilioForm({ from: FARMER, to: "+15005550006", body: "HELP" });
    const forged = twilio.getExpectedTwilioSignature(
      "not-the-token",
      `${PUBLIC_BASE_URL}/channels/twilio`,
      form,
    );
    expect((await post(form, forged)).statusCode).toBe(403);
    // Signed for the internal address instead of the public one: also refused.
    const internal = twilio.getExpectedTwilioSignature(authToken, "http://localhost/channels/twilio", form);
    expect((await post(form, internal)).statusCode).toBe(403);
    const missing = await h.app.inject({
      method: "POST",
      url: "/channels/twilio",
      payload: new URLSearchParams(form).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(missing.statusCode).toBe(403);
    const log = h.logs.join("\n");
    expect(log).toContain("twilio webhook refused");
    expect(log).not.toContain(authToken);
    expect(log).not.toContain(forged);
  });

  it("answers an SMS without a photo with help, from the number written to", async () => {
    const sends = h.standIn.sends("twilio").length;
    expect(
      (await post(twilioForm({ from: "+14155550100", to: "+15005550006", body: "hello?" }))).statusCode,
    ).toBe(200);
    const reply = (await h.standIn.waitForSends("twilio", sends + 1)).at(-1)!;
    expect(reply.body).toMatchObject({ From: "+15005550006", To: "+14155550100" });
    expect(String(reply.body.Body)).toMatch(/^Send a clear photo of one sick leaf/);
  });

  it("answers webhooks fast: it only verifies and enqueues", async () => {
    const sends = h.standIn.sends("twilio").length;
    const latencies: number[] = [];
    for (let i = 0; i < 21; i++) {
      const form = twilioForm({ from: `+1415555${2000 + i}`, to: "+15005550006", body: "HELP" });
      const started = performance.now();
      expect((await post(form)).statusCode).toBe(200);
      latencies.push(performance.now() - started);
    }
    latencies.sort((a, b) => a - b);
    expect(latencies[10]).toBeLessThan(50);
    await h.standIn.waitForSends("twilio", sends + 21);
  });

  it("asks for a new photo when the media is not on a Twilio host", async () => {
    const sends = h.standIn.sends("twilio").length;
    const form = twilioForm({
      from: "+14155550101",
      to: "+15005550006",
      mediaUrl: "https://media.example.net/leaf.jpg",
    });
    expect((await post(form)).statusCode).toBe(200);
    const reply = (await h.standIn.waitForSends("twilio", sends + 1)).at(-1)!;
    expect(String(reply.body.Body)).toMatch(/^We could not read your photo/);
    expect(
      isTwilioMediaHost(new URL("https://api.twilio.com/2010-04-01/Accounts/AC1/Messages/MM1/Media/ME1")),
    ).toBe(true);
    expect(isTwilioMediaHost(new URL("https://mms.twiliocdn.com/x"))).toBe(true);
    expect(isTwilioMediaHost(new URL("http://api.twilio.com/x"))).toBe(false);
    expect(isTwilioMediaHost(new URL("https://api.twilio.com.evil.net/x"))).toBe(false);
  });

  it("slows down on a provider 429 for as long as its Retry-After says, instead of failing the job", async () => {
    const sends = h.standIn.sends("twilio").length;
    const calls = diagnoser.calls();
    h.standIn.failNext("twilio", 1, 429, 2);
    const form = twilioForm({
      from: "+254700000002",
      to: "+15005550006",
      mediaUrl: `${h.standIn.baseUrl}/media/leaf1.jpg`,
    });
    expect((await post(form)).statusCode).toBe(200);
    await h.standIn.waitForSends("twilio", sends + 2, 60_000);
    await untilIdle(h);
    const job = await h.queue.queue.getJob(inboundJobId({ provider: "twilio", messageId: form.MessageSid! }));
    expect(await job!.getState()).toBe("completed");
    // The throttled attempt did not count, and the photo was not diagnosed twice.
    expect(job!.attemptsMade).toBeLessThanOrEqual(1);
    expect(diagnoser.calls() - calls).toBe(1);
    const [refused, accepted] = h.standIn.sends("twilio").slice(sends);
    expect([refused!.failedWith, accepted!.failedWith]).toEqual([429, undefined]);
    expect(accepted!.at - refused!.at).toBeGreaterThanOrEqual(1_950);
    expect(h.logs.join("\n")).toContain("provider rate limit");
    // MMS (a photo by SMS) is answered as an SMS: at most 3 segments, from the number written to.
    const reply = h.standIn.sends("twilio").at(-1)!;
    expect(reply.body.From).toBe("+15005550006");
    expect(countSegments(String(reply.body.Body)).segments).toBeLessThanOrEqual(3);
  }, 90_000);
});
