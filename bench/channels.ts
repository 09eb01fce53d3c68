// `npm run bench:channels`: pushes webhook messages (WhatsApp photos through Twilio's webhook, Telegram photos)
// at a real listening server, with the real model loaded in a worker and the providers' APIs on loopback.
// Reports webhook latency p50/p99 and end-to-end jobs/s. Bounded: BENCH_MESSAGES (default 1000) messages,
// BENCH_TIMEOUT_S (default 300) seconds of waiting for the jobs.
import { createHash } from "node:crypto";
import path from "node:path";
import Fastify from "fastify";
import { Redis } from "ioredis";
import { pino } from "pino";
import twilio from "twilio";
import { createLanguageMemory } from "../channels/core/language.js";
import channelsPlugin from "../channels/core/plugin.js";
import { createChannelQueue } from "../channels/core/queue.js";
import { createAdapters, destinationOf, farmerKeys, routingOwner } from "../channels/core/registry.js";
import { createRenderer } from "../channels/core/render/index.js";
import { createTexts } from "../channels/core/render/texts.js";
import { createReplyWindows } from "../channels/core/reply-window.js";
import { createChannelWorker } from "../channels/core/worker.js";
import { PROVIDERS } from "../channels/providers.js";
import { loadConfig, ROOT_DIR } from "../src/config.js";
import { createDiagnoser } from "../src/diagnosis/diagnose.js";
import { createKnowledge } from "../src/diagnosis/kb.js";
import { LANGUAGES } from "../src/diagnosis/types.js";
import { createRecords } from "../src/results/records.js";
import { leafPhoto } from "../test/channels/support/core.js";
import { TEST_CONFIG } from "../test/channels/support/harness.js";
import { startProviderStandIn } from "../test/channels/support/providers.js";

const MESSAGES = Math.min(Number(process.env.BENCH_MESSAGES ?? 1000), 5000);
const TIMEOUT_S = Math.min(Number(process.env.BENCH_TIMEOUT_S ?? 300), 1800);
// Webhooks in flight at once: providers deliver concurrently.
const IN_FLIGHT = Math.max(1, Math.min(Number(process.env.BENCH_IN_FLIGHT ?? 8), 64));
const WARM_UP = 20;
// Read as the worker reads it: INFERENCE_THREADS, within its bounds, or the worker's own default.
const THREADS = loadConfig(process.env).inferenceThreads;

const tag = `bench-channels-${process.pid}-${Date.now()}`;
const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", { maxRetriesPerRequest: null });
const silent = pino({ level: "silent" });
const standIn = await startProviderStandIn();
const photos = await Promise.all([1, 2, 3, 4].map((seed) => leafPhoto(seed)));
for (const [i, photo] of photos.entries()) standIn.media.set(`leaf${i}`, photo);

const [diagnoser, knowledge] = await Promise.all([
  createDiagnoser({
    modelPath: path.join(ROOT_DIR, "models/disease-classifier.onnx"),
    threads: THREADS,
    logger: silent,
  }),
  createKnowledge(),
]);
const texts = createTexts();
const records = createRecords(redis, { prefix: `${tag}:` });
const store = records.store;
const queue = createChannelQueue({
  connection: redis,
  prefix: `${tag}-bull`,
  routingOwner: routingOwner(PROVIDERS),
});
const config = TEST_CONFIG;

const app = Fastify({ logger: false });
await app.register(channelsPlugin, {
  config,
  providers: PROVIDERS,
  redis,
  store,
  queue,
  keyPrefix: `${tag}:`,
  texts,
  knowledge,
});
const address = await app.listen({ port: 0, host: "127.0.0.1" });

const worker = createChannelWorker({
  connection: redis,
  queue: queue.queue,
  turns: queue.turns,
  prefix: `${tag}-bull`,
  concurrency: Math.max(2, THREADS * 2),
  diagnoser,
  records,
  languages: createLanguageMemory(redis, `${tag}:`),
  renderer: createRenderer(texts),
  adapters: createAdapters(
    PROVIDERS,
    config,
    Object.fromEntries(PROVIDERS.map((p) => [p.id, standIn.baseUrl])),
  ),
  windows: createReplyWindows({ redis, prefix: `${tag}:`, farmerKey: farmerKeys(PROVIDERS) }),
  knowledge,
  destination: (routing) => destinationOf(routing, PROVIDERS, config),
  farmerKey: farmerKeys(PROVIDERS),
  logger: silent,
});

// Half WhatsApp (signed form posts), half Telegram (JSON updates with the secret header).
function webhook(i: number): { url: string; init: RequestInit } {
  const photo = `leaf${i % photos.length}`;
  if (i % 2 === 0) {
    const form: Record<string, string> = {
      // Twilio's shape: MM and 32 hex digits (the webhook's schema takes nothing else).
      MessageSid: `MM${createHash("md5").update(`${tag}-${i}`).digest("hex")}`,
      AccountSid: config.twilio.accountSid,
      From: `whatsapp:+2547${String(10_000_000 + i).slice(-8)}`,
      To: `whatsapp:${config.twilio.whatsappFrom}`,
      Body: "",
      NumMedia: "1",
      MediaContentType0: "image/jpeg",
      MediaUrl0: `${standIn.baseUrl}/media/${photo}`,
      ApiVersion: "2010-04-01",
    };
    const signature = twilio.getExpectedTwilioSignature(
      config.twilio.authToken,
      `${config.publicBaseUrl}/channels/twilio`,
      form,
    );
    return {
      url: `${address}/channels/twilio`,
      init: {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature },
        body: new URLSearchParams(form).toString(),
      },
    };
  }
  const update = {
    update_id: 1_000_000 + i,
    message: {
      message_id: i,
      from: { id: 10_000 + i, is_bot: false, first_name: "Bench", language_code: "fr" },
      chat: { id: 10_000 + i, type: "private" },
      date: Math.floor(Date.now() / 1000),
      photo: [
        {
          file_id: photo,
          file_unique_id: photo,
          file_size: photos[i % photos.length]!.length,
          width: 512,
          height: 416,
        },
      ],
    },
  };
  return {
    url: `${address}/channels/telegram`,
    init: {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-telegram-bot-api-secret-token": config.telegram.webhookSecret,
      },
      body: JSON.stringify(update),
    },
  };
}

// A reply that takes longer than RECEIVED_NOTICE_AFTER_MS is preceded by "photo received": only answers count.
const notices = new Set(LANGUAGES.map((language) => texts(language, "received")));
const sent = () =>
  [...standIn.sends("twilio"), ...standIn.sends("telegram")].filter(
    (r) => !notices.has(String(r.body.Body ?? r.body.text)),
  ).length;
async function until(count: number, deadline: number) {
  while (sent() < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}

async function push(from: number, to: number, latencies: number[]) {
  let next = from;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < to) {
        const { url, init } = webhook(next++);
        const t0 = performance.now();
        const res = await fetch(url, init);
        await res.arrayBuffer();
        latencies.push(performance.now() - t0);
        if (res.status !== 200) throw new Error(`webhook answered ${res.status}`);
      }
    }),
  );
}

// Warm-up (JIT, connection pools, the model's first runs), then the measured run.
await push(0, WARM_UP, []);
await until(WARM_UP, Date.now() + 60_000);

const latencies: number[] = [];
const started = performance.now();
await push(WARM_UP, WARM_UP + MESSAGES, latencies);
const pushedIn = (performance.now() - started) / 1000;
await until(WARM_UP + MESSAGES, Date.now() + TIMEOUT_S * 1000);
const elapsed = (performance.now() - started) / 1000;
const done = sent() - WARM_UP;

latencies.sort((a, b) => a - b);
const pct = (p: number) =>
  latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!.toFixed(1);
console.log(
  [
    "| messages | webhooks in flight | webhook p50 ms | webhook p99 ms | webhook max ms | replies sent | end to end s | jobs/s |",
    "|---|---|---|---|---|---|---|---|",
    `| ${MESSAGES} | ${IN_FLIGHT} | ${pct(50)} | ${pct(99)} | ${latencies.at(-1)!.toFixed(1)} | ${done} | ${elapsed.toFixed(1)} | ${(done / elapsed).toFixed(1)} |`,
    "",
    `Half WhatsApp photos through the signed Twilio webhook, half Telegram photos; each webhook only verifies and ` +
      `enqueues (pushed in ${pushedIn.toFixed(1)} s). One worker process: BullMQ concurrency ${Math.max(2, THREADS * 2)}, ` +
      `${THREADS} inference thread(s), the real model, Redis on loopback, the providers' APIs on a loopback stand-in.` +
      (done < MESSAGES ? ` TIMED OUT after ${TIMEOUT_S} s with ${MESSAGES - done} replies missing.` : ""),
  ].join("\n"),
);

await worker.close(true);
await app.close();
await queue.queue.obliterate({ force: true });
await queue.close();
const keys = [...(await redis.keys(`${tag}:*`)), ...(await redis.keys(`${tag}-bull:*`))];
if (keys.length) await redis.del(...keys);
await redis.quit();
await diagnoser.close();
await standIn.close();
