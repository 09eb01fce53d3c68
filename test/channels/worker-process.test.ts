// The worker as it runs in production: `npm run worker` in its own process, with the real model, killed or
// stopped mid-job. The webhook side is the real Telegram webhook in this process; both share Redis.
//
// The worker process gets a REDIS_PREFIX of this run's own: workers of another checkout's test run on the
// same Redis never take this run's jobs, nor this run's workers theirs.
import { existsSync } from "node:fs";
import { readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import channelsPlugin from "../../channels/core/plugin.js";
import { type ChannelQueue, createChannelQueue, inboundJobId } from "../../channels/core/queue.js";
import { routingOwner } from "../../channels/core/registry.js";
import { WORKER_HEARTBEAT_STALE_MS } from "../../channels/limits.js";
import { PROVIDERS } from "../../channels/providers.js";
import { redisNamespaces } from "../../src/config.js";
import { createKnowledge } from "../../src/diagnosis/kb.js";
import { createResultStore, type ResultStore } from "../../src/results/store.js";
import { HAVE_DATASETS } from "../diagnosis/helpers.js";
import { loadCore } from "./support/core.js";
import { TEST_CONFIG } from "./support/harness.js";
import { diagnosedPhoto } from "./support/photos.js";
import { type ProviderStandIn, startProviderStandIn } from "./support/providers.js";
import { startWorkerProcess, type WorkerProcess } from "./support/worker-process.js";

const REDIS_URL = "redis://127.0.0.1:6379";
const REDIS_PREFIX = `test-worker-process-${process.pid}-${Date.now()}:`;
const namespaces = redisNamespaces({ redisPrefix: REDIS_PREFIX });
const { botToken, webhookSecret } = TEST_CONFIG.telegram;

let redis: Redis;
let queue: ChannelQueue;
let store: ResultStore;
let app: FastifyInstance;
let standIn: ProviderStandIn;
const workers: WorkerProcess[] = [];
let updateId = 81_000;

async function removeOurKeys() {
  const keys = await redis.keys(`${REDIS_PREFIX}*`);
  if (keys.length) await redis.del(...keys);
}

function startWorker(
  heartbeatFile = path.join(tmpdir(), `worker-alive-${process.pid}-${workers.length}`),
): WorkerProcess {
  const worker = startWorkerProcess({
    WORKER_HEARTBEAT_FILE: heartbeatFile,
    REDIS_URL,
    REDIS_PREFIX,
    TELEGRAM_BOT_TOKEN: botToken,
    TELEGRAM_WEBHOOK_SECRET: webhookSecret,
    TELEGRAM_API_ROOT: standIn.baseUrl,
    // A crashed worker's job is taken over within lock + one check: 12 s here instead of about a minute.
    // Not much shorter: a lock is renewed at half its life, and a worker whose event loop lags past that
    // (a loaded machine) loses its job to the stalled check.
    CHANNEL_JOB_LOCK_MS: "10000",
    CHANNEL_STALLED_CHECK_MS: "2000",
    INFERENCE_THREADS: "1",
    LOG_LEVEL: "info",
  });
  workers.push(worker);
  return worker;
}

// A farmer's photo as Telegram posts it, through the real webhook (secret header, enqueue).
async function postPhoto(chatId: number, fileId: string): Promise<string> {
  const update = {
    update_id: ++updateId,
    message: {
      message_id: updateId,
      from: { id: chatId, is_bot: false, first_name: "Juma", language_code: "sw" },
      chat: { id: chatId, first_name: "Juma", type: "private" },
      date: 1_763_892_000,
      photo: [{ file_id: fileId, file_unique_id: `u-${fileId}`, file_size: 60_000, width: 640, height: 480 }],
    },
  };
  const res = await app.inject({
    method: "POST",
    url: "/channels/telegram",
    headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": webhookSecret },
    payload: JSON.stringify(update),
  });
  expect(res.statusCode).toBe(200);
  return inboundJobId({ provider: "telegram", messageId: String(update.update_id) });
}

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      const output = workers.flatMap((w) => w.output.slice(-10)).join("\n");
      throw new Error(`${what}: not in ${timeoutMs} ms\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

const downloads = (fileId: string) =>
  standIn.requests.filter((r) => r.path === `/file/bot${botToken}/photos/${fileId}`);
const sendsTo = (chatId: number) =>
  standIn.sends("telegram").filter((r) => r.body.chat_id === String(chatId));
const stateOf = (jobId: string) => queue.queue.getJobState(jobId);

beforeAll(async () => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  await removeOurKeys();
  standIn = await startProviderStandIn();
  queue = createChannelQueue({
    connection: redis,
    prefix: namespaces.queue,
    routingOwner: routingOwner(PROVIDERS),
  });
  store = createResultStore(redis, { prefix: namespaces.keys });
  app = Fastify({ logger: false });
  await app.register(channelsPlugin, {
    config: {
      telegram: TEST_CONFIG.telegram,
      twilio: undefined,
      africasTalking: undefined,
      publicBaseUrl: undefined,
    },
    providers: PROVIDERS,
    redis,
    store,
    queue,
    knowledge: await createKnowledge(),
    keyPrefix: namespaces.keys,
  });
  await app.ready();
});

afterAll(async () => {
  for (const worker of workers) worker.child.kill("SIGKILL");
  await Promise.all(workers.map((w) => w.exited));
  await app?.close();
  await queue?.queue.obliterate({ force: true });
  await queue?.close();
  if (redis) {
    await removeOurKeys();
    await redis.quit();
  }
  await standIn?.close();
});

// In CI the datasets are there: a missing one fails the suite instead of skipping it.
describe.skipIf(!HAVE_DATASETS && !process.env.CI)("the worker process", () => {
  beforeAll(async () => {
    // A real leaf the model diagnoses, so the answer carries the code the tests look for.
    const core = await loadCore();
    const photo = await diagnosedPhoto(core.diagnoser, "tomato__late_blight");
    await core.diagnoser.close();
    for (const fileId of ["leaf-killed", "leaf-stopped"]) standIn.media.set(fileId, photo);
  }, 120_000);

  it("killed mid-job loses nothing: another process takes the job over and answers once", async () => {
    const first = startWorker();
    await first.ready;
    const release = standIn.holdMedia("leaf-killed");
    const jobId = await postPhoto(71_001, "leaf-killed");
    // The worker is mid-job: its download of the photo hangs in the stand-in.
    await until(() => downloads("leaf-killed").length === 1, "the first worker fetching the photo");
    expect(await stateOf(jobId)).toBe("active");

    first.child.kill("SIGKILL");
    expect(await first.exited).toBe("SIGKILL");
    release();

    const second = startWorker();
    await second.ready;
    await until(
      async () => (await stateOf(jobId)) === "completed",
      "the job completing in the second worker",
    );
    expect(downloads("leaf-killed")).toHaveLength(2);
    const job = await queue.queue.getJob(jobId);
    const requestId = job?.data.kind === "inbound" ? job.data.requestId : undefined;
    const stored = await store.get(requestId ?? "");
    expect(stored?.language).toBe("sw");
    // Answered once (the answer carries its code; "did this help?" and the photo notice follow it once each).
    expect(sendsTo(71_001).filter((s) => String(s.body.text).includes(stored!.code))).toHaveLength(1);
    expect(sendsTo(71_001).length).toBeLessThanOrEqual(3);
    expect(second.output.join("\n")).toContain(`"jobId":"${jobId}"`);
  }, 240_000);

  it("on SIGTERM finishes the active job, then exits 0", async () => {
    const worker = workers.at(-1)!;
    const release = standIn.holdMedia("leaf-stopped");
    const jobId = await postPhoto(71_002, "leaf-stopped");
    await until(() => downloads("leaf-stopped").length === 1, "the worker fetching the photo");

    worker.child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 1_000));
    // Still there, still holding the job, while its download waits.
    expect(worker.child.exitCode).toBeNull();
    expect(await stateOf(jobId)).toBe("active");
    release();

    expect(await worker.exited).toBe(0);
    expect(await stateOf(jobId)).toBe("completed");
    const job = await queue.queue.getJob(jobId);
    const stored = await store.get(job?.data.kind === "inbound" ? (job.data.requestId ?? "") : "");
    expect(sendsTo(71_002).filter((s) => String(s.body.text).includes(stored!.code))).toHaveLength(1);
    expect(worker.output.join("\n")).toContain("finishing active jobs before exit");
  }, 120_000);

  it("writes its heartbeat for the liveness probe while it consumes jobs", async () => {
    const file = path.join(tmpdir(), `worker-alive-${process.pid}-beat`);
    await rm(file, { force: true });
    const worker = startWorker(file);
    await worker.ready;
    // writeFile creates the file before it fills it: wait for a time in it.
    const written = async () => (existsSync(file) ? Date.parse(await readFile(file, "utf8")) : Number.NaN);
    await until(async () => Number.isFinite(await written()), "the heartbeat file");
    expect(Date.now() - (await written())).toBeLessThan(WORKER_HEARTBEAT_STALE_MS);
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toBe(0);
    await rm(file, { force: true });
  });
});
