// One channel platform per test file: real Redis (own key and BullMQ prefixes), the real Fastify webhooks,
// a BullMQ worker, and the providers' APIs on a loopback stand-in.
import type { Worker } from "bullmq";
import Fastify, { type FastifyInstance } from "fastify";
import { Redis } from "ioredis";
import { pino } from "pino";
import { createAfricasTalkingAdapter } from "../../../channels/africastalking/send.js";
import type { Adapters } from "../../../channels/core/handlers.js";
import { createLanguageMemory, type LanguageMemory } from "../../../channels/core/language.js";
import channelsPlugin from "../../../channels/core/plugin.js";
import { type ChannelQueue, createChannelQueue } from "../../../channels/core/queue.js";
import { createRenderer, type Renderer } from "../../../channels/core/render/index.js";
import { createTexts } from "../../../channels/core/render/texts.js";
import type { SimpleKnowledge } from "../../../channels/core/render/view.js";
import { createChannelWorker, type WorkerDeps } from "../../../channels/core/worker.js";
import { createTelegramAdapter } from "../../../channels/telegram/send.js";
import { createTwilioAdapter } from "../../../channels/twilio/send.js";
import type { Config } from "../../../src/config.js";
import type { Diagnoser } from "../../../src/diagnosis/diagnoser.js";
import { createRecords, type Records } from "../../../src/results/records.js";
import type { ResultStore } from "../../../src/results/store.js";
import {
  type ProviderStandIn,
  routeAfricasTalkingTo,
  startProviderStandIn,
  twilioHttpClientFor,
} from "./providers.js";

export const PUBLIC_BASE_URL = "https://crops.example.org/api";
export const TEST_CONFIG = {
  publicBaseUrl: PUBLIC_BASE_URL,
  twilio: {
    accountSid: `AC${"0123456789abcdef".repeat(2)}`,
    authToken: "twilio-auth-token-for-tests",
    smsFrom: "+15005550006",
    whatsappFrom: "+14155238886",
  },
  telegram: { botToken: "123456789:AAtest-bot-token_for-tests", webhookSecret: "tg_secret-for-tests" },
  africasTalking: {
    username: "cropdoctor",
    apiKey: "at-api-key-for-tests",
    senderId: undefined,
    webhookToken: "at-webhook-token-0123456789abcdef",
    allowedIps: [] as string[],
  },
} satisfies Pick<Config, "publicBaseUrl" | "twilio" | "telegram" | "africasTalking">;

export interface Harness {
  app: FastifyInstance;
  redis: Redis;
  store: ResultStore;
  records: Records;
  languages: LanguageMemory;
  queue: ChannelQueue;
  renderer: Renderer;
  standIn: ProviderStandIn;
  adapters: Adapters;
  /** Every log line the worker and the webhooks wrote, to check no secret leaks. */
  logs: string[];
  startWorker(overrides?: Partial<WorkerDeps>): Worker;
  close(): Promise<void>;
}

export interface HarnessOptions {
  name: string;
  diagnoser: Diagnoser;
  knowledge?: SimpleKnowledge;
  allowedIps?: string[];
  /** The server the webhooks join (the REST app, as src/server.ts does); a bare Fastify otherwise. */
  baseApp?: (parts: {
    redis: Redis;
    records: Records;
    queue: ChannelQueue;
    keyPrefix: string;
  }) => Promise<FastifyInstance>;
}

export async function startHarness({
  name,
  diagnoser,
  knowledge,
  allowedIps = [],
  baseApp,
}: HarnessOptions): Promise<Harness> {
  const tag = `test-${name}-${process.pid}-${Date.now()}`;
  const keyPrefix = `${tag}:`;
  const queuePrefix = `${tag}-bull`;
  const redis = new Redis("redis://127.0.0.1:6379", { maxRetriesPerRequest: null });
  const logs: string[] = [];
  const logger = pino({ level: "debug" }, { write: (line: string) => void logs.push(line) });
  const standIn = await startProviderStandIn();
  const stopInterceptingAt = routeAfricasTalkingTo(standIn);

  const config = { ...TEST_CONFIG, africasTalking: { ...TEST_CONFIG.africasTalking, allowedIps } };
  const records = createRecords(redis, { prefix: keyPrefix });
  const store = records.store;
  const languages = createLanguageMemory(redis, keyPrefix);
  const queue = createChannelQueue({ connection: redis, prefix: queuePrefix });
  const texts = createTexts();
  const renderer = createRenderer(texts);
  const adapters: Adapters = {
    twilio: createTwilioAdapter({
      config: config.twilio,
      httpClient: twilioHttpClientFor(standIn),
      isMediaHostAllowed: (url) => url.origin === standIn.baseUrl,
    }),
    telegram: createTelegramAdapter({ config: config.telegram, apiRoot: standIn.baseUrl }),
    africastalking: createAfricasTalkingAdapter({ config: config.africasTalking }),
  };

  const app = baseApp
    ? await baseApp({ redis, records, queue, keyPrefix })
    : Fastify({ logger: { level: "debug", stream: { write: (line: string) => void logs.push(line) } } });
  await app.register(channelsPlugin, {
    config,
    redis,
    store,
    queue,
    keyPrefix,
    texts,
    ...(knowledge ? { knowledge } : {}),
  });
  await app.ready();

  const workers: Worker[] = [];
  return {
    app,
    redis,
    store,
    records,
    languages,
    queue,
    renderer,
    standIn,
    adapters,
    logs,
    startWorker(overrides = {}) {
      const worker = createChannelWorker({
        connection: redis,
        queue: queue.queue,
        prefix: queuePrefix,
        concurrency: 2,
        diagnoser,
        records,
        languages,
        renderer,
        adapters,
        logger,
        ...(knowledge ? { knowledge } : {}),
        ...overrides,
      });
      workers.push(worker);
      return worker;
    },
    async close() {
      await Promise.all(workers.map((w) => w.close(true)));
      await app.close();
      await queue.queue.obliterate({ force: true });
      await queue.close();
      const keys = await redis.keys(`${keyPrefix}*`);
      if (keys.length) await redis.del(...keys);
      await redis.quit();
      stopInterceptingAt();
      await standIn.close();
    },
  };
}

/** Waits until the queue has nothing left to do (no job waiting, running, delayed or prioritized). */
export async function untilIdle(h: Pick<Harness, "queue">, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const counts = await h.queue.queue.getJobCounts("waiting", "active", "delayed", "prioritized");
    if (Object.values(counts).every((n) => n === 0)) return;
    if (Date.now() > deadline) throw new Error(`queue did not drain: ${JSON.stringify(counts)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
