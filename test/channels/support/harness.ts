// One channel platform per test file: real Redis (own key and BullMQ prefixes), the real Fastify webhooks,
// a BullMQ worker, and the providers' APIs on a loopback stand-in.
import type { Worker } from "bullmq";
import Fastify, { type FastifyInstance } from "fastify";
import { Redis } from "ioredis";
import { pino } from "pino";
import { createExpertLoop } from "../../../channels/core/expert-loop.js";
import { createLanguageMemory, type LanguageMemory } from "../../../channels/core/language.js";
import channelsPlugin from "../../../channels/core/plugin.js";
import { type ChannelQueue, createChannelQueue } from "../../../channels/core/queue.js";
import { createAdapters, destinationOf, farmerKeys, routingOwner } from "../../../channels/core/registry.js";
import { createRenderer, type Renderer } from "../../../channels/core/render/index.js";
import { createTexts } from "../../../channels/core/render/texts.js";
import { createReplyWindows, type ReplyWindows } from "../../../channels/core/reply-window.js";
import type { Adapter, Capabilities } from "../../../channels/core/types.js";
import { createChannelWorker, type WorkerDeps } from "../../../channels/core/worker.js";
import { PROVIDERS } from "../../../channels/providers.js";
import type { Config } from "../../../src/config.js";
import type { Diagnoser } from "../../../src/diagnosis/diagnoser.js";
import type { Knowledge } from "../../../src/diagnosis/kb.js";
import { createRecords, type Records } from "../../../src/results/records.js";
import type { ResultStore } from "../../../src/results/store.js";
import type { StoredResult } from "../../../src/results/types.js";
import { awaitsOfficer } from "../../../src/review/queue.js";
import { type ProviderStandIn, startProviderStandIn } from "./providers.js";

export const PUBLIC_BASE_URL = "https://crops.example.org/api";
export const TEST_CONFIG = {
  publicBaseUrl: PUBLIC_BASE_URL,
  twilio: {
    accountSid: `AC${"0123456789abcdef".repeat(2)}`,
    authToken: "twilio-auth-token-for-tests",
    smsFrom: "+15005550006",
    whatsappFrom: "+14155238886",
    // One template for every language, and Swahili's own.
    whatsappNoticeSids: { "*": `HX${"0123456789abcdef".repeat(2)}`, sw: `HX${"fedcba9876543210".repeat(2)}` },
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
  /** The worker's reply windows (WhatsApp's 24 hours): a test opens one as a farmer's message would. */
  windows: ReplyWindows;
  queue: ChannelQueue;
  renderer: Renderer;
  standIn: ProviderStandIn;
  adapters: Map<string, Adapter>;
  /** Every log line the worker and the webhooks wrote, to check no secret leaks. */
  logs: string[];
  /** Whether any job, in any state, is an inbound message with this text (tests mark bodies with one). */
  queuedText(text: string): Promise<boolean>;
  /** The result an inbound photo job stored (its job data records it). */
  resultOf(jobId: string): Promise<StoredResult | undefined>;
  /** What a provider's channel can show, as the worker renders for it. */
  capabilities(provider: string, channel: string): Capabilities;
  startWorker(overrides?: Partial<WorkerDeps>): Worker;
  close(): Promise<void>;
}

export interface HarnessOptions {
  name: string;
  diagnoser: Diagnoser;
  knowledge: Knowledge;
  allowedIps?: string[];
  /** The server the webhooks join (the REST app, as src/server.ts does); a bare Fastify otherwise. */
  baseApp?: (parts: {
    redis: Redis;
    records: Records;
    queue: ChannelQueue;
    keyPrefix: string;
  }) => Promise<FastifyInstance>;
  /** The worker asks "did this help?" and sends the photo notice, as the real worker does (worker-main.ts). */
  expertLoop?: boolean;
}

export async function startHarness({
  name,
  diagnoser,
  knowledge,
  allowedIps = [],
  baseApp,
  expertLoop = false,
}: HarnessOptions): Promise<Harness> {
  const tag = `test-${name}-${process.pid}-${Date.now()}`;
  const keyPrefix = `${tag}:`;
  const queuePrefix = `${tag}-bull`;
  const redis = new Redis("redis://127.0.0.1:6379", { maxRetriesPerRequest: null });
  const logs: string[] = [];
  const logger = pino({ level: "debug" }, { write: (line: string) => void logs.push(line) });
  const standIn = await startProviderStandIn();

  const config = { ...TEST_CONFIG, africasTalking: { ...TEST_CONFIG.africasTalking, allowedIps } };
  const records = createRecords(redis, { prefix: keyPrefix });
  const store = records.store;
  const languages = createLanguageMemory(redis, keyPrefix);
  const queue = createChannelQueue({
    connection: redis,
    prefix: queuePrefix,
    routingOwner: routingOwner(PROVIDERS),
  });
  // Webhooks give Redis 500 ms (WEBHOOK_REDIS_BUDGET_MS) before they answer "busy": the queue is ready first.
  await queue.queue.waitUntilReady();
  const texts = createTexts();
  const renderer = createRenderer(texts);
  // Every provider's API root points at the stand-in, as TWILIO_API_ROOT, TELEGRAM_API_ROOT and AT_API_ROOT
  // do for a worker process.
  const adapters = createAdapters(
    PROVIDERS,
    config,
    Object.fromEntries(PROVIDERS.map((p) => [p.id, standIn.baseUrl])),
  );

  const app = baseApp
    ? await baseApp({ redis, records, queue, keyPrefix })
    : Fastify({ logger: { level: "debug", stream: { write: (line: string) => void logs.push(line) } } });
  await app.register(channelsPlugin, {
    config,
    providers: PROVIDERS,
    redis,
    store,
    queue,
    keyPrefix,
    texts,
    knowledge,
  });
  await app.ready();

  const windows = createReplyWindows({ redis, prefix: keyPrefix, farmerKey: farmerKeys(PROVIDERS) });
  const workers: Worker[] = [];
  return {
    app,
    redis,
    store,
    records,
    languages,
    windows,
    queue,
    renderer,
    standIn,
    adapters,
    logs,
    capabilities: (provider, channel) => adapters.get(provider)!.capabilities(channel),
    async queuedText(text) {
      const jobs = await queue.queue.getJobs([
        "waiting",
        "active",
        "delayed",
        "prioritized",
        "completed",
        "failed",
      ]);
      return jobs.some((job) => job.data.kind === "inbound" && job.data.message.text === text);
    },
    async resultOf(jobId) {
      const data = (await queue.queue.getJob(jobId))?.data;
      return data?.kind === "inbound" && data.requestId ? store.get(data.requestId) : undefined;
    },
    startWorker(overrides = {}) {
      const worker = createChannelWorker({
        connection: redis,
        queue: queue.queue,
        turns: queue.turns,
        prefix: queuePrefix,
        concurrency: 2,
        diagnoser,
        records,
        languages,
        renderer,
        adapters,
        windows,
        knowledge,
        destination: (routing) => destinationOf(routing, PROVIDERS, config),
        farmerKey: farmerKeys(PROVIDERS),
        view: { officerReview: awaitsOfficer },
        ...(expertLoop ? { expertLoop: createExpertLoop({ records, renderer }) } : {}),
        logger,
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
      const keys = [...(await redis.keys(`${keyPrefix}*`)), ...(await redis.keys(`${queuePrefix}:*`))];
      if (keys.length) await redis.del(...keys);
      await redis.quit();
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
