// The API with its provider webhooks while Redis is unreachable: a private redis-server is paused, stopped
// and started again under it. Every webhook answers within a second, the way its provider needs, nothing is
// lost that the provider will not deliver again, rate limits fall back to this instance and count again in
// Redis afterwards, and every log line is JSON.
import { once } from "node:events";
import type { FastifyInstance } from "fastify";
import { Redis } from "ioredis";
import twilio from "twilio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import channelsPlugin from "../../channels/core/plugin.js";
import { type ChannelQueue, createChannelQueue, inboundJobId } from "../../channels/core/queue.js";
import { routingOwner } from "../../channels/core/registry.js";
import { PROVIDERS } from "../../channels/providers.js";
import { buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createKnowledge } from "../../src/diagnosis/kb.js";
import { REDELIVERY_SECONDS } from "../../src/limits.js";
import { createRedis } from "../../src/redis.js";
import { createResultStore } from "../../src/results/store.js";
import { capturedLogger } from "../api/support/app.js";
import { StubDiagnoser } from "../api/support/stub-diagnoser.js";
import { type PrivateRedis, startPrivateRedis } from "../support/redis-server.js";
import { PUBLIC_BASE_URL, TEST_CONFIG } from "./support/harness.js";

const { authToken, accountSid } = TEST_CONFIG.twilio;
const { webhookSecret } = TEST_CONFIG.telegram;
const AT = `/channels/africastalking/${TEST_CONFIG.africasTalking.webhookToken}`;

let server: PrivateRedis;
let redis: Redis;
let queue: ChannelQueue;
let app: FastifyInstance;
const log = capturedLogger();
let update = 5_000;

beforeAll(async () => {
  server = await startPrivateRedis();
  redis = createRedis(server.url, log.logger, { name: "test-api" });
  await once(redis, "ready");
  queue = createChannelQueue({ connection: redis, routingOwner: routingOwner(PROVIDERS) });
  const store = createResultStore(redis);
  const config = loadConfig({ RATE_LIMIT_HEALTH: "5", RATE_LIMIT_DIAGNOSIS: "5" });
  app = await buildApp({ config, diagnoser: new StubDiagnoser(), redis }, { logger: log.logger });
  await app.register(channelsPlugin, {
    config: TEST_CONFIG,
    providers: PROVIDERS,
    redis,
    store,
    queue,
    knowledge: await createKnowledge(),
  });
  await app.ready();
});

afterAll(async () => {
  await app?.close();
  await queue?.close();
  redis?.disconnect();
  await server?.stop();
});

function twilioWebhook(sid: string) {
  const form = {
    MessageSid: sid,
    AccountSid: accountSid,
    From: "whatsapp:+254712345678",
    To: `whatsapp:${TEST_CONFIG.twilio.whatsappFrom}`,
    Body: "",
    NumMedia: "1",
    MediaContentType0: "image/jpeg",
    MediaUrl0: "https://api.twilio.com/2010-04-01/Accounts/AC1/Messages/MM1/Media/ME1",
    ApiVersion: "2010-04-01",
  };
  return app.inject({
    method: "POST",
    url: "/channels/twilio",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "x-twilio-signature": twilio.getExpectedTwilioSignature(
        authToken,
        `${PUBLIC_BASE_URL}/channels/twilio`,
        form,
      ),
    },
    payload: new URLSearchParams(form).toString(),
  });
}

function telegramWebhook(id: number) {
  return app.inject({
    method: "POST",
    url: "/channels/telegram",
    headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": webhookSecret },
    payload: JSON.stringify({
      update_id: id,
      message: { message_id: id, chat: { id: 4242, type: "private" }, date: 1_763_892_000, text: "help" },
    }),
  });
}

function form(path: string, fields: Record<string, string>) {
  return app.inject({
    method: "POST",
    url: `${AT}/${path}`,
    headers: { "content-type": "application/x-www-form-urlencoded" },
    payload: new URLSearchParams(fields).toString(),
  });
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

const health = (ip: string) => app.inject({ url: "/health", remoteAddress: ip });

async function logged(text: string, timeoutMs = 10_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
    if (log.lines().some((l) => l.includes(text))) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no log line with ${text}:\n${log.lines().slice(-10).join("\n")}`);
}

describe("Redis connected but not answering", () => {
  it("the Telegram webhook answers 503 within the budget, and the update is queued once Redis answers", async () => {
    const pauser = new Redis(server.url);
    await pauser.call("CLIENT", "PAUSE", "2500", "ALL");
    const id = ++update;
    const { value: res, ms } = await timed(() => telegramWebhook(id));
    expect(res.statusCode).toBe(503);
    expect(res.headers["retry-after"]).toBe(String(REDELIVERY_SECONDS));
    expect(ms).toBeLessThan(1_000);
    // The enqueue that was cut off lands once Redis answers; Telegram's retry would find its job id taken.
    const jobId = inboundJobId({ provider: "telegram", messageId: String(id) });
    for (let i = 0; i < 100 && !(await queue.queue.getJob(jobId)); i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(await queue.queue.getJob(jobId)).toBeDefined();
    expect((await telegramWebhook(id)).statusCode).toBe(200);
    expect(await queue.queue.getJobCounts("waiting")).toMatchObject({ waiting: 1 });
    pauser.disconnect();
  });
});

describe("Redis stopped", () => {
  beforeAll(async () => {
    // Down for good: the client has seen its first reconnect attempt refused.
    const refused = once(redis, "error");
    await server.stop();
    await refused;
  });

  it("Twilio gets 503 with Retry-After within a second (it retries with the URL's connection overrides)", async () => {
    const { value: res, ms } = await timed(() => twilioWebhook(`MM${"0".repeat(31)}7`));
    expect(res.statusCode).toBe(503);
    expect(res.headers["retry-after"]).toBe(String(REDELIVERY_SECONDS));
    expect(res.json()).toMatchObject({ request_id: res.headers["x-request-id"] });
    expect(ms).toBeLessThan(1_000);
  });

  it("Telegram gets 503 within a second", async () => {
    const { value: res, ms } = await timed(() => telegramWebhook(++update));
    expect(res.statusCode).toBe(503);
    expect(ms).toBeLessThan(1_000);
  });

  it("USSD gets the apology screen at once, in the language of the phone's country, else English", async () => {
    const kenyan = await timed(() =>
      form("ussd", { sessionId: "s1", phoneNumber: "+254712345678", text: "" }),
    );
    expect(kenyan.value.statusCode).toBe(200);
    expect(kenyan.value.body).toBe(
      "END Huduma ina shughuli nyingi, tafadhali jaribu tena baada ya dakika chache.",
    );
    expect(kenyan.ms).toBeLessThan(1_000);
    const other = await form("ussd", { sessionId: "s2", phoneNumber: "+15005550006", text: "1" });
    expect(other.body).toBe("END Service busy, please try again in a few minutes.");
  });

  it("a malformed USSD request is apologised to within a second, in the language of the phone's country", async () => {
    // No sessionId: the saved language cannot be read either, so the number's country decides.
    const { value: res, ms } = await timed(() => form("ussd", { phoneNumber: "+254712345678", text: "" }));
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe("END Samahani, kuna tatizo. Tafadhali piga tena.");
    expect(ms).toBeLessThan(1_000);
  });

  it("an Africa's Talking SMS (never delivered again) is accepted and kept until Redis is back", async () => {
    const { value: res, ms } = await timed(() =>
      form("sms", {
        id: "ATXid_outage_1",
        from: "+254712345678",
        to: "12345",
        text: "HELP",
        date: "2026-11-25",
      }),
    );
    expect(res.statusCode).toBe(200);
    expect(ms).toBeLessThan(1_000);
  });

  it("rate limits fall back to this instance, at once, and say so in the log", async () => {
    for (const remaining of ["4", "3", "2"]) {
      const { value: res, ms } = await timed(() => health("10.9.0.1"));
      expect(res.statusCode).toBe(200);
      expect(res.headers["x-ratelimit-remaining"]).toBe(remaining);
      expect(ms).toBeLessThan(1_000);
    }
    expect(res503Lines()).toBeGreaterThanOrEqual(2);
    await logged("rate limits are per instance while Redis is unavailable");
  });
});

function res503Lines(): number {
  return log.lines().filter((l) => l.includes("webhook answered 503")).length;
}

describe("Redis back", () => {
  beforeAll(async () => {
    // Not events.once: it rejects on the "error" of a reconnect attempt refused before the server is up.
    const ready = new Promise((resolve) => redis.once("ready", resolve));
    await server.start();
    await ready;
  });

  it("queues the SMS kept during the outage", async () => {
    await logged("outbox: messages kept during the outage queued");
    const job = await queue.queue.getJob(
      inboundJobId({ provider: "africastalking", messageId: "ATXid_outage_1" }),
    );
    expect(job?.data).toMatchObject({ kind: "inbound", message: { text: "HELP", from: "+254712345678" } });
  });

  it("counts the requests made during the outage in the shared limits", async () => {
    await logged("requests counted per instance during the outage added to the shared rate limits");
    const res = await health("10.9.0.1");
    // 5 a minute: 3 spent during the outage, this is the 4th.
    expect(res.headers["x-ratelimit-remaining"]).toBe("1");
  });

  it("logged all of it as JSON lines, the outage once and not once per reconnect attempt", () => {
    const lines = log.lines();
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    const warnings = lines.filter(
      (l) => l.includes("redis unavailable, reconnecting") && l.includes('"level":40'),
    );
    expect(warnings.length).toBeGreaterThanOrEqual(1);
    expect(warnings.length).toBeLessThanOrEqual(2);
    expect(lines.some((l) => l.includes("redis connection restored"))).toBe(true);
  });
});
