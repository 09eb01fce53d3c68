// The API and the worker as processes through a Redis outage: everything either writes, on stdout and
// stderr, is one pino JSON line (ioredis and BullMQ would print multi-line stack dumps), and the API keeps
// answering its webhooks meanwhile.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT_DIR } from "../../src/config.js";
import { type PrivateRedis, startPrivateRedis } from "../support/redis-server.js";
import { TEST_CONFIG } from "./support/harness.js";
import { startWorkerProcess, type WorkerProcess } from "./support/worker-process.js";

const { botToken, webhookSecret } = TEST_CONFIG.telegram;

interface ApiProcess {
  child: ChildProcess;
  output: string[];
}

let redis: PrivateRedis;
let api: ApiProcess;
let worker: WorkerProcess;

function env(): Record<string, string> {
  return {
    REDIS_URL: redis.url,
    TELEGRAM_BOT_TOKEN: botToken,
    TELEGRAM_WEBHOOK_SECRET: webhookSecret,
    TELEGRAM_API_ROOT: "http://127.0.0.1:9",
    INFERENCE_THREADS: "1",
    LOG_LEVEL: "info",
  };
}

function startApi(): ApiProcess {
  const child = spawn(process.execPath, ["--import", "tsx", "src/server.ts"], {
    cwd: ROOT_DIR,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      PORT: "0",
      HOST: "127.0.0.1",
      ...env(),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  // stdout and stderr alike: a stack dump on stderr breaks a log collector as much as one on stdout.
  const collect = (chunk: Buffer) => output.push(...chunk.toString("utf8").split("\n").filter(Boolean));
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  return { child, output };
}

async function until(lines: () => string[], text: string, timeoutMs = 60_000): Promise<string> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
    const line = lines().find((l) => l.includes(text));
    if (line) return line;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no line with ${text}:\n${lines().slice(-10).join("\n")}`);
}

beforeAll(async () => {
  redis = await startPrivateRedis();
  api = startApi();
  worker = startWorkerProcess(env());
  await worker.ready;
  await until(() => api.output, "Server listening at");
}, 120_000);

afterAll(async () => {
  for (const child of [api?.child, worker?.child]) child?.kill("SIGKILL");
  await redis?.stop();
});

describe("a Redis outage", () => {
  it("is logged by both processes in JSON lines only, while the API keeps answering", async () => {
    await redis.stop();
    await until(() => api.output, '"msg":"redis unavailable, reconnecting"');
    await until(() => worker.output, "ECONNREFUSED");

    const url = /"msg":"Server listening at (http:\/\/127\.0\.0\.1:\d+)"/.exec(api.output.join("\n"))?.[1];
    const started = performance.now();
    const res = await fetch(`${url}/channels/telegram`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": webhookSecret },
      body: JSON.stringify({
        update_id: 1,
        message: { message_id: 1, chat: { id: 1 }, date: 1, text: "hi" },
      }),
    });
    expect(res.status).toBe(503);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect((await fetch(`${url}/health`)).status).toBe(200);

    await redis.start();
    await until(() => api.output, "redis connection restored");
    await until(() => worker.output, "redis connection restored");

    api.child.kill("SIGTERM");
    worker.child.kill("SIGTERM");
    await Promise.all([once(api.child, "exit"), worker.exited]);

    for (const line of [...api.output, ...worker.output]) {
      expect(() => JSON.parse(line), line).not.toThrow();
    }
  }, 120_000);
});
