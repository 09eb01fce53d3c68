// More than one machine's worth of processes on one Redis: two API processes (`src/server.ts`) and two channel
// workers (`channels/core/worker-main.ts`), as real child processes with the real model, sharing the Redis on
// 127.0.0.1:6379 under a key prefix of this run's own (REDIS_PREFIX), so parallel runs never meet.
import { type ChildProcess, spawn } from "node:child_process";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApiKey, ROOT_DIR } from "../../src/config.js";
import { multipartBody } from "../api/support/form.js";
import { leafPhoto } from "../channels/support/core.js";
import { TEST_CONFIG } from "../channels/support/harness.js";
import { type ProviderStandIn, startProviderStandIn } from "../channels/support/providers.js";
import { startWorkerProcess, type WorkerProcess } from "../channels/support/worker-process.js";

const PREFIX = `test-scale-${process.pid}-${Date.now()}:`;
const { botToken, webhookSecret } = TEST_CONFIG.telegram;
const API_KEY = "partner-key-for-the-scale-test";
const HEALTH_LIMIT = 6;

interface ApiProcess {
  child: ChildProcess;
  output: string[];
  url: string;
}

let redis: Redis;
let standIn: ProviderStandIn;
let apis: ApiProcess[] = [];
const workers: WorkerProcess[] = [];
let updateId = 90_000;

function shared(): Record<string, string> {
  return {
    REDIS_URL: "redis://127.0.0.1:6379",
    REDIS_PREFIX: PREFIX,
    TELEGRAM_BOT_TOKEN: botToken,
    TELEGRAM_WEBHOOK_SECRET: webhookSecret,
    INFERENCE_THREADS: "1",
    LOG_LEVEL: "info",
  };
}

async function startApi(): Promise<ApiProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/server.ts"], {
    cwd: ROOT_DIR,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      ...shared(),
      PORT: "0",
      HOST: "127.0.0.1",
      RATE_LIMIT_HEALTH: String(HEALTH_LIMIT),
      API_KEYS: `partner:${hashApiKey(API_KEY)}:100`,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  const collect = (chunk: Buffer) => output.push(...chunk.toString("utf8").split("\n").filter(Boolean));
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  for (let i = 0; i < 1200; i++) {
    const url = /"msg":"Server listening at (http:\/\/127\.0\.0\.1:\d+)"/.exec(output.join("\n"))?.[1];
    if (url) return { child, output, url };
    if (child.exitCode !== null) throw new Error(`API exited:\n${output.join("\n")}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`API did not start:\n${output.join("\n")}`);
}

function startWorker(): WorkerProcess {
  const worker = startWorkerProcess({
    ...shared(),
    TELEGRAM_API_ROOT: standIn.baseUrl,
    // A killed worker's job is taken over within lock + one check (12 s here, about a minute by default).
    CHANNEL_JOB_LOCK_MS: "10000",
    CHANNEL_STALLED_CHECK_MS: "2000",
  });
  workers.push(worker);
  return worker;
}

/** A farmer's photo as Telegram posts it, delivered to one API process. */
function postPhoto(api: ApiProcess, id: number, chatId: number, fileId: string) {
  return fetch(`${api.url}/channels/telegram`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": webhookSecret },
    body: JSON.stringify({
      update_id: id,
      message: {
        message_id: id,
        from: { id: chatId, is_bot: false, first_name: "Amina", language_code: "sw" },
        chat: { id: chatId, type: "private" },
        date: 1_763_892_000,
        photo: [
          { file_id: fileId, file_unique_id: `u-${fileId}`, file_size: 60_000, width: 640, height: 480 },
        ],
      },
    }),
  });
}

async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 90_000,
): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await check()); ) {
    if (Date.now() > deadline) {
      const tail = [...apis, ...workers].flatMap((p) => p.output.slice(-5)).join("\n");
      throw new Error(`${what}: not within ${timeoutMs} ms\n${tail}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

const sendsTo = (chatId: number) =>
  standIn.sends("telegram").filter((r) => r.body.chat_id === String(chatId));
// The answers to photos, without the expert loop's "did this help?" and photo notice (their buttons say so).
const answersTo = (chatId: number) =>
  sendsTo(chatId).filter(
    (r) => !/"callback_data":"(fb:|photos:no)/.test(JSON.stringify(r.body.reply_markup ?? {})),
  );
const jobKey = (jobId: string) => `${PREFIX}bull:channels:${jobId}`;

beforeAll(async () => {
  redis = new Redis("redis://127.0.0.1:6379");
  standIn = await startProviderStandIn();
  const photo = await leafPhoto(7);
  for (let i = 0; i < 6; i++) standIn.media.set(`leaf-${i}`, photo);
  standIn.media.set("leaf-held", photo);
  startWorker();
  startWorker();
  apis = await Promise.all([startApi(), startApi()]);
  await Promise.all(workers.map((w) => w.ready));
}, 240_000);

afterAll(async () => {
  for (const p of [...apis, ...workers]) p.child.kill("SIGKILL");
  await standIn?.close();
  if (redis) {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${PREFIX}*`, "COUNT", 1000);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== "0");
    await redis.quit();
  }
});

describe("two API processes and two workers on one Redis", () => {
  it("share one rate limit", async () => {
    const remaining: string[] = [];
    for (let i = 0; i < HEALTH_LIMIT; i++) {
      const res = await fetch(`${apis[i % 2]!.url}/health`);
      expect(res.status).toBe(200);
      remaining.push(res.headers.get("x-ratelimit-remaining") ?? "");
    }
    expect(remaining).toEqual(["5", "4", "3", "2", "1", "0"]);
    for (const api of apis) expect((await fetch(`${api.url}/health`)).status).toBe(429);
  });

  it("do each webhook's job once, though the provider delivered it to both APIs", async () => {
    const chats = [0, 1, 2, 3, 4, 5].map((i) => 61_000 + i);
    for (const [i, chatId] of chats.entries()) {
      const id = ++updateId;
      const [a, b] = await Promise.all(apis.map((api) => postPhoto(api, id, chatId, `leaf-${i}`)));
      expect([a!.status, b!.status]).toEqual([200, 200]);
    }
    await until(() => chats.every((c) => sendsTo(c).length >= 1), "a reply to every photo");
    // No chat got a second reply, and the two workers did six jobs between them, none twice.
    for (const chatId of chats) expect(answersTo(chatId)).toHaveLength(1);
    // A worker logs a job done after its reply went out.
    const done = () => workers.flatMap((w) => w.output.filter((l) => l.includes('"msg":"job done"')));
    await until(() => done().length >= chats.length, "every job logged done");
    expect(done()).toHaveLength(chats.length);
  }, 180_000);

  it("serve a stored result from either API", async () => {
    const { payload, headers } = await multipartBody({ language: "sw" }, { data: await leafPhoto(3) });
    const made = await fetch(`${apis[0]!.url}/diagnosis/`, {
      method: "POST",
      body: payload,
      headers: { ...headers, "x-api-key": API_KEY },
    });
    expect(made.status).toBe(200);
    const { request_id } = (await made.json()) as { request_id: string };
    // The result is stored just after the answer goes out (in Redis, shared by both processes).
    const read = (api: ApiProcess) =>
      fetch(`${api.url}/results/${request_id}`, { headers: { "x-api-key": API_KEY } });
    await until(async () => (await read(apis[1]!)).status === 200, "the result stored", 10_000);
    for (const api of apis) {
      const res = await fetch(`${api.url}/results/${request_id}`, { headers: { "x-api-key": API_KEY } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { result: { request_id: string } }).result.request_id).toBe(request_id);
    }
  }, 60_000);

  it("lose nothing when the worker holding a job is killed", async () => {
    const chatId = 62_001;
    const release = standIn.holdMedia("leaf-held");
    const id = ++updateId;
    expect((await postPhoto(apis[1]!, id, chatId, "leaf-held")).status).toBe(200);
    const jobId = `telegram_${id}`;
    await until(async () => (await redis.get(`${jobKey(jobId)}:lock`)) !== null, "a worker taking the job");
    // The lock holds the BullMQ id of the worker that has the job, which each worker logged at start.
    const token = (await redis.get(`${jobKey(jobId)}:lock`))!;
    const holder = workers.find((w) =>
      w.output.some(
        (l) => l.includes('"channel worker started"') && token.startsWith(JSON.parse(l).workerId),
      ),
    )!;
    expect(holder).toBeDefined();
    holder.child.kill("SIGKILL");
    expect(await holder.exited).toBe("SIGKILL");
    release();

    // The answer goes out before the job ends (the expert loop's prompts follow it): wait for its end.
    await until(
      async () => (await redis.hget(jobKey(jobId), "finishedOn")) !== null,
      "the other worker finishing the job",
    );
    expect(answersTo(chatId)).toHaveLength(1);
    const survivor = workers.find((w) => w !== holder)!;
    expect(survivor.output.join("\n")).toContain(`"jobId":"${jobId}"`);
  }, 180_000);
});
