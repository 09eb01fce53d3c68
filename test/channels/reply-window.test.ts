// WhatsApp delivers free-form messages only within 24 hours of the farmer's last one: a reply outside it is
// kept, the farmer is asked to write by the approved template, and the kept replies go out when they do.
// Real Redis, the real Twilio adapter against the loopback stand-in.
import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createLanguageMemory } from "../../channels/core/language.js";
import { createReplyWindows, deliverHeld, windowedSends } from "../../channels/core/reply-window.js";
import type { Reply } from "../../channels/core/types.js";
import { WHATSAPP_REPLY_WINDOW_MS } from "../../channels/limits.js";
import { twilioFarmer } from "../../channels/twilio/farmer.js";
import { createTwilioAdapter } from "../../channels/twilio/send.js";
import { createSentLog } from "../../src/results/sent-log.js";
import { TEST_CONFIG } from "./support/harness.js";
import { type ProviderStandIn, startProviderStandIn } from "./support/providers.js";

const prefix = `test-window-${process.pid}-${Date.now()}:`;
const FARMER = "+254700111222";
const OURS = TEST_CONFIG.twilio.whatsappFrom;
const HOUR = 3_600_000;

let redis: Redis;
let standIn: ProviderStandIn;
const logs: string[] = [];
const logger = pino({ level: "debug" }, { write: (line: string) => void logs.push(line) });
const farmerKey = (_provider: string, address: string) => twilioFarmer(address);

beforeAll(async () => {
  redis = new Redis("redis://127.0.0.1:6379", { maxRetriesPerRequest: null });
  standIn = await startProviderStandIn();
});

afterEach(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  standIn.requests.length = 0;
  logs.length = 0;
});

afterAll(async () => {
  await redis.quit();
  await standIn.close();
});

function setup({ notice = true } = {}) {
  const raw = createTwilioAdapter({
    config: { ...TEST_CONFIG.twilio, ...(notice ? {} : { whatsappNoticeSids: {} }) },
    apiRoot: standIn.baseUrl,
  });
  const windows = createReplyWindows({ redis, prefix, farmerKey });
  const log = createSentLog(redis, { prefix });
  const languages = createLanguageMemory(redis, prefix);
  const languageOf = (owner: string) => languages.resolve(owner, { phone: owner });
  const adapter = windowedSends(new Map([[raw.provider, raw]]), {
    windows,
    log,
    farmerKey,
    languageOf,
    logger,
  }).get(raw.provider)!;
  return { adapter, windows, log, languages };
}

const reply = (text: string, channel = "whatsapp"): Reply =>
  channel === "whatsapp"
    ? { provider: "twilio", channel, to: `whatsapp:${FARMER}`, from: OURS, text }
    : { provider: "twilio", channel, to: FARMER, text };
const target = { provider: "twilio", channel: "whatsapp", to: `whatsapp:${FARMER}`, from: OURS };
const bodies = () => standIn.sends("twilio").map((s) => s.body);
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

describe("WhatsApp's 24-hour reply window", () => {
  it("sends at once within the window the farmer's last message opened", async () => {
    const { adapter, windows } = setup();
    await deliverHeld(target, adapter, windows, ago(23 * HOUR), logger);
    await adapter.send(reply("Your maize has common rust."));
    expect(bodies()).toEqual([expect.objectContaining({ Body: "Your maize has common rust." })]);
  });

  it("keeps replies outside it, asks once by template, and sends them in order when the farmer writes", async () => {
    const { adapter, windows, log } = setup();
    // The farmer last wrote 25 hours ago: the window has closed.
    await deliverHeld(target, adapter, windows, ago(25 * HOUR), logger);
    await adapter.send(reply("An officer answered: northern leaf blight."));
    await adapter.send(reply("Result code: K7P2QX"));
    expect(bodies()).toEqual([
      expect.objectContaining({
        To: `whatsapp:${FARMER}`,
        From: `whatsapp:${OURS}`,
        ContentSid: TEST_CONFIG.twilio.whatsappNoticeSids.sw,
      }),
    ]);
    expect(bodies()[0]!.Body).toBeUndefined();
    expect((await log.list(FARMER)).map((m) => [m.text, m.ok, m.held])).toEqual([
      ["Result code: K7P2QX", false, true],
      ["An officer answered: northern leaf blight.", false, true],
    ]);

    expect(await deliverHeld(target, adapter, windows, ago(0), logger)).toBe(2);
    expect(
      bodies()
        .slice(1)
        .map((b) => b.Body),
    ).toEqual(["An officer answered: northern leaf blight.", "Result code: K7P2QX"]);
    expect(await windows.first(target)).toBeUndefined();
    // Nothing waits any more, and the window is open: the next reply goes straight out.
    await adapter.send(reply("Thank you."));
    expect(bodies().at(-1)).toMatchObject({ Body: "Thank you." });
  });

  it("keeps a reply whose send fails for the farmer's next message", async () => {
    const { adapter, windows } = setup();
    await adapter.send(reply("An officer answered: gray leaf spot."));
    standIn.failNext("twilio", 1, 500);
    await expect(deliverHeld(target, adapter, windows, ago(0), logger)).rejects.toThrow();
    expect((await windows.first(target))?.text).toBe("An officer answered: gray leaf spot.");
    expect(await deliverHeld(target, adapter, windows, ago(0), logger)).toBe(1);
    expect(bodies().at(-1)).toMatchObject({ Body: "An officer answered: gray leaf spot." });
  });

  it("keeps the reply when the template is refused, and logs why without the account's credentials", async () => {
    const { adapter, windows } = setup();
    standIn.failNext("twilio", 1, 500);
    await adapter.send(reply("An officer answered: early blight."));
    expect(standIn.sends("twilio")[0]).toMatchObject({ failedWith: 500 });
    expect((await windows.first(target))?.text).toBe("An officer answered: early blight.");
    const error = logs.map((l) => JSON.parse(l)).find((l) => l.msg === "window notice failed");
    expect(error).toMatchObject({ level: 50, err: expect.any(String) });
    expect(JSON.stringify(logs)).not.toContain(TEST_CONFIG.twilio.authToken);
    expect(JSON.stringify(logs)).not.toContain(
      Buffer.from(TEST_CONFIG.twilio.accountSid).toString("base64").slice(0, 12),
    );
  });

  it("asks in the farmer's language: its own template where there is one, else the one for every language", async () => {
    const { adapter, languages } = setup();
    await adapter.send(reply("An officer answered."));
    // A Kenyan number: Swahili.
    expect(bodies().at(-1)).toMatchObject({ ContentSid: TEST_CONFIG.twilio.whatsappNoticeSids.sw });
    const french = "+221771234567";
    await languages.set(french, "fr");
    await adapter.send({ ...reply("Un conseiller a répondu."), to: `whatsapp:${french}` });
    expect(bodies().at(-1)).toMatchObject({
      To: `whatsapp:${french}`,
      ContentSid: TEST_CONFIG.twilio.whatsappNoticeSids["*"],
    });
  });

  it("drops a kept reply the provider refuses for good, and sends the rest: one bad reply blocks nothing", async () => {
    const { adapter, windows } = setup();
    await adapter.send(reply("First answer."));
    await adapter.send(reply("Second answer."));
    standIn.failNext("twilio", 1, 400);
    expect(await deliverHeld(target, adapter, windows, ago(0), logger)).toBe(1);
    expect(bodies().at(-1)).toMatchObject({ Body: "Second answer." });
    expect(await windows.count(target)).toBe(0);
    expect(logs.some((l) => l.includes("kept reply refused for good"))).toBe(true);
  });

  it("asks again with the next kept reply when the template failed, and once per wait otherwise", async () => {
    const { adapter, windows } = setup();
    standIn.failNext("twilio", 1, 503);
    await adapter.send(reply("First answer."));
    await adapter.send(reply("Second answer."));
    await adapter.send(reply("Third answer."));
    const notices = () => bodies().filter((b) => b.ContentSid);
    // The first notice failed (503), the second reply asked again, the third did not.
    expect(standIn.sends("twilio").map((r) => r.failedWith ?? "ok")).toEqual([503, "ok"]);
    expect(notices()).toHaveLength(2);
    await deliverHeld(target, adapter, windows, ago(0), logger);
    // The wait is over: the window's next close asks again.
    await redis.del(`${prefix}window:twilio:whatsapp:${FARMER}`);
    await adapter.send(reply("Fourth answer."));
    expect(notices()).toHaveLength(3);
  });

  it("a message read late never shortens the window a later one opened", async () => {
    const { adapter, windows } = setup();
    await deliverHeld(target, adapter, windows, ago(0), logger);
    await deliverHeld(target, adapter, windows, ago(23 * HOUR), logger);
    expect(await redis.pttl(`${prefix}window:twilio:whatsapp:${FARMER}`)).toBeGreaterThan(23 * HOUR);
  });

  it("ends when the window closes while kept replies go out: they are kept for the next message", async () => {
    const { adapter, windows } = setup();
    await adapter.send(reply("First answer."));
    await adapter.send(reply("Second answer."));
    const closing = {
      ...adapter,
      async send(r: Reply) {
        await redis.del(`${prefix}window:twilio:whatsapp:${FARMER}`);
        return adapter.send(r);
      },
    };
    expect(await deliverHeld(target, closing, windows, ago(0), logger)).toBe(2);
    expect(await windows.count(target)).toBe(2);
    expect(bodies().filter((b) => b.Body)).toEqual([]);
  });

  it("keeps them without a template configured, and says so in a log line", async () => {
    const { adapter, windows } = setup({ notice: false });
    await adapter.send(reply("An officer answered: leaf mold."));
    expect(bodies()).toEqual([]);
    const warning = logs.map((l) => JSON.parse(l)).find((l) => l.level === 40);
    expect(warning?.msg).toMatch(/no notice is configured/);
    expect(JSON.stringify(logs)).not.toContain("254700111222");
    expect(await deliverHeld(target, adapter, windows, ago(HOUR), logger)).toBe(1);
  });

  it("a message read after its own window closed (a job retried for a day) delivers nothing", async () => {
    const { adapter, windows } = setup();
    await adapter.send(reply("An officer answered: septoria leaf spot."));
    expect(await deliverHeld(target, adapter, windows, ago(WHATSAPP_REPLY_WINDOW_MS + HOUR), logger)).toBe(0);
    expect(bodies()).toHaveLength(1);
    expect((await windows.first(target))?.text).toMatch(/septoria/);
  });

  it("SMS has no window: replies go straight out", async () => {
    const { adapter } = setup();
    await adapter.send(reply("Maize common rust.", "sms"));
    expect(bodies()).toEqual([expect.objectContaining({ Body: "Maize common rust.", To: FARMER })]);
  });
});
