import { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { parseCodeRequest } from "../../channels/core/code-command.js";
import {
  deliverableChannels as deliverableOn,
  destinationOf,
  routingOwner,
} from "../../channels/core/registry.js";
import { PROVIDERS } from "../../channels/providers.js";
import { createRecords } from "../../src/results/records.js";
import { CODE_ALPHABET, newShortCode, normalizeShortCode } from "../../src/results/short-code.js";
import { createResultSink } from "../../src/results/sink.js";
import { createResultStore, RESULT_TTL_SECONDS } from "../../src/results/store.js";
import { resultFixture } from "./support/fixtures.js";

const redis = new Redis("redis://127.0.0.1:6379");
const none = { twilio: undefined, telegram: undefined, africasTalking: undefined, publicBaseUrl: undefined };
const deliverableChannels = (config: Partial<Parameters<typeof deliverableOn>[1]>) =>
  deliverableOn(PROVIDERS, { ...none, ...config });
const prefix = `test-store-${process.pid}-${Date.now()}:`;

afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

describe("short codes", () => {
  it("use an alphabet without look-alikes, and always a digit", () => {
    for (const ch of "01OILZSB") expect(CODE_ALPHABET).not.toContain(ch);
    for (let i = 0; i < 500; i++) {
      const code = newShortCode();
      expect(code).toMatch(/^[23456789ACDEFGHJKMNPQRTUVWXY]{6}$/);
      expect(code).toMatch(/[2-9]/);
      expect(normalizeShortCode(code)).toBe(code);
    }
  });

  it("normalize what farmers type, and only what has a code's shape", () => {
    expect(normalizeShortCode("k7m 4qx")).toBe("K7M4QX");
    expect(normalizeShortCode("K7M-4QX")).toBe("K7M4QX");
    expect(normalizeShortCode("K7M4Q0")).toBeUndefined();
    expect(normalizeShortCode("HELP")).toBeUndefined();
    // Six letters of the alphabet but no digit: words, never codes.
    for (const word of ["ASANTE", "MERCI", "GRAZIE", "KARIBU", "HAPANA", "Thanks"])
      expect(normalizeShortCode(word)).toBeUndefined();
  });
});

describe("code requests by text", () => {
  it.each([
    ["K7M4QX", { code: "K7M4QX", part: "summary" }],
    ["k7m 4qx", { code: "K7M4QX", part: "summary" }],
    ["K7M4QX 2", { code: "K7M4QX", part: "treatment" }],
    ["k7m4qx2", { code: "K7M4QX", part: "treatment" }],
    ["K7M-4QX 2", { code: "K7M4QX", part: "treatment" }],
    ["ACD4E2 2", { code: "ACD4E2", part: "treatment" }],
    ["K7M4QX 3", undefined],
    ["ASANTE", undefined],
    ["asante sana", undefined],
    ["MERCI", undefined],
    ["GRAZIE", undefined],
    ["GRAZIE 2", undefined],
    ["HELP", undefined],
  ])("%j → %j", (text, request) => {
    expect(parseCodeRequest(text)).toEqual(request);
  });
});

describe("result store on Redis", () => {
  const store = createResultStore(redis, { prefix });

  it("keeps a result 30 days under its request_id, its code and its owner", async () => {
    const result = resultFixture();
    const saved = await store.save({ result, language: "sw", owner: "+254712345678" });
    expect((await store.get(result.request_id))?.code).toBe(saved.code);
    expect((await store.getByCode(saved.code))?.result.request_id).toBe(result.request_id);
    expect((await store.lastFor("+254712345678"))?.result.request_id).toBe(result.request_id);
    for (const key of [`result:${result.request_id}`, `code:${saved.code}`, "last:+254712345678"]) {
      const ttl = await redis.ttl(`${prefix}${key}`);
      expect(ttl).toBeGreaterThan(RESULT_TTL_SECONDS - 60);
      expect(ttl).toBeLessThanOrEqual(RESULT_TTL_SECONDS);
    }
  });

  it.each([
    ["Redis", () => store],
    ["memory", () => createResultStore(undefined)],
  ])(
    "%s: the owner's last result is the last that answers them, not a later photo that could not",
    async (_, make) => {
      const results = make();
      const owner = `+2547${String(Date.now()).slice(-8)}`;
      const real = await results.save({ result: resultFixture(), language: "sw", owner });
      const later = [
        resultFixture({ image_analysis: { is_plant: true, quality_issue: "blurry", detected_crop: null } }),
        resultFixture({ outcome: "unsure", crop_health: "unknown", diagnoses: [] }),
        resultFixture({ outcome: "not_plant", is_plant: false, diagnoses: [], candidates: [] }),
        resultFixture({
          outcome: "crop_not_supported",
          crop_health: "unknown",
          diagnoses: [],
          candidates: [],
        }),
      ];
      for (const result of later) await results.save({ result, language: "sw", owner });
      expect((await results.lastFor(owner))?.code).toBe(real.code);
      const healthy = resultFixture({ outcome: "healthy", crop_health: "healthy", diagnoses: [] });
      expect((await results.lastFor(owner))?.code).toBe(real.code);
      const newer = await results.save({ result: healthy, language: "sw", owner });
      expect((await results.lastFor(owner))?.code).toBe(newer.code);
    },
  );

  it("keeps the first code when the same request is saved again (a retried job), and renews both keys", async () => {
    const result = resultFixture();
    const first = await store.save({ result, language: "en" });
    // Days later, as Redis would see it: both keys well into their 30 days.
    const keys = [`${prefix}result:${result.request_id}`, `${prefix}code:${first.code}`];
    for (const key of keys) await redis.expire(key, 3600);
    const second = await store.save({ result, language: "en" });
    expect(second.code).toBe(first.code);
    for (const key of keys) expect(await redis.ttl(key)).toBeGreaterThan(RESULT_TTL_SECONDS - 60);
    expect((await store.getByCode(first.code))?.result.request_id).toBe(result.request_id);
  });

  it("never hands out a code twice", async () => {
    const codes = new Set<string>();
    for (let i = 0; i < 50; i++)
      codes.add((await store.save({ result: resultFixture(), language: "en" })).code);
    expect(codes.size).toBe(50);
  });
});

describe("result store in memory (no REDIS_URL)", () => {
  it("is bounded, dropping the least recently used", async () => {
    const store = createResultStore(undefined, { maxEntries: 3 });
    const saved = [];
    for (let i = 0; i < 3; i++)
      saved.push(await store.save({ result: resultFixture(), language: "en", owner: `o${i}` }));
    await store.get(saved[0]!.result.request_id);
    await store.save({ result: resultFixture(), language: "en" });
    expect(await store.get(saved[1]!.result.request_id)).toBeUndefined();
    expect(await store.getByCode(saved[1]!.code)).toBeUndefined();
    expect(await store.lastFor("o1")).toBeUndefined();
    expect((await store.getByCode(saved[0]!.code))?.owner).toBe("o0");
  });

  it("forgets expired results", async () => {
    const store = createResultStore(undefined, { ttlSeconds: -1 });
    const saved = await store.save({ result: resultFixture(), language: "en" });
    expect(await store.getByCode(saved.code)).toBeUndefined();
  });
});

describe("result sink (REST results)", () => {
  const { store, record } = createRecords(redis, { prefix });
  const routed: string[] = [];
  const enqueueDelivery = async (requestId: string) => void routed.push(requestId);

  function capture() {
    const lines: string[] = [];
    return { lines, logger: pino({ level: "warn" }, { write: (line: string) => void lines.push(line) }) };
  }

  it("knows which routing channels the configured providers can send on", () => {
    const twilio = {
      accountSid: "AC1",
      authToken: "x",
      smsFrom: undefined,
      whatsappFrom: "+14155238886",
      whatsappNoticeSids: {},
    };
    const at = { username: "u", apiKey: "k", senderId: undefined, webhookToken: "t", allowedIps: [] };
    expect([...deliverableChannels({ twilio })]).toEqual(["whatsapp"]);
    expect([...deliverableChannels({ twilio: { ...twilio, smsFrom: "+15005550006" } })]).toEqual([
      "sms",
      "whatsapp",
    ]);
    expect([...deliverableChannels({ africasTalking: at })]).toEqual(["sms"]);
    expect([...deliverableChannels({})]).toEqual([]);
    // SMS goes through Africa's Talking when both can send it; the farmer key is the provider's.
    const both = { ...none, twilio: { ...twilio, smsFrom: "+15005550006" }, africasTalking: at };
    expect(destinationOf({ channel: "sms", phone: "+254712345678" }, PROVIDERS, both)).toEqual({
      provider: "africastalking",
      channel: "sms",
      to: "+254712345678",
    });
    const owner = routingOwner(PROVIDERS);
    expect(owner({ channel: "telegram", chatId: "42" })).toBe("tg:42");
    expect(owner({ channel: "whatsapp", phone: "+254712345678" })).toBe("+254712345678");
    expect(owner({ channel: "telegram" })).toBeUndefined();
  });

  it("queues a delivery on a channel some provider serves", async () => {
    const { lines, logger } = capture();
    const deliverable = deliverableChannels({ telegram: { botToken: "t", webhookSecret: "s" } });
    const sink = createResultSink({ record, enqueueDelivery, deliverable, logger });
    const result = resultFixture();
    await sink(result, { language: "en", source: "api", routing: { channel: "telegram", chatId: "42" } });
    expect(routed).toContain(result.request_id);
    expect(lines).toEqual([]);
  });

  it("warns, and only stores, when no configured provider serves the routing channel", async () => {
    const { lines, logger } = capture();
    const telegramOnly = deliverableChannels({ telegram: { botToken: "t", webhookSecret: "s" } });
    const result = resultFixture();
    const ownerOf = routingOwner(PROVIDERS);
    await createResultSink({ record, enqueueDelivery, deliverable: telegramOnly, logger, ownerOf })(result, {
      language: "en",
      source: "api",
      routing: { channel: "whatsapp", phone: "+254712345678" },
    });
    const other = resultFixture();
    // No channel configured at all: no queue to deliver through.
    await createResultSink({ record, logger })(other, {
      language: "en",
      source: "api",
      routing: { channel: "sms", phone: "+254712345678" },
    });

    expect(routed).not.toContain(result.request_id);
    expect((await store.get(result.request_id))?.owner).toBe("+254712345678");
    expect((await store.get(other.request_id))?.code).toMatch(/[2-9]/);
    const warnings = lines.map((line) => JSON.parse(line) as { level: number; channel: string; msg: string });
    expect(warnings.map((w) => [w.level, w.channel])).toEqual([
      [40, "whatsapp"],
      [40, "sms"],
    ]);
    expect(warnings[0]!.msg).toMatch(/not configured/);
    expect(lines.join("\n")).not.toContain("254712345678");
  });
});
