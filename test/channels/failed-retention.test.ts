// Failed jobs hold a farmer's number, words and photo address: `npm run jobs` may retry them for as long as
// results are kept, and not longer. BullMQ drops failed jobs past JOB_OPTIONS' age when another job fails.
import { Queue, UnrecoverableError, Worker } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JOB_OPTIONS, QUEUE_NAME } from "../../channels/core/queue.js";
import { FAILED_JOB_TTL_S } from "../../channels/limits.js";
import { RESULT_TTL_SECONDS } from "../../src/limits.js";
import { until } from "./support/wait.js";

const prefix = `test-failed-retention-${process.pid}-${Date.now()}`;
let redis: Redis;
let queue: Queue;
let worker: Worker<unknown, void>;

beforeAll(async () => {
  redis = new Redis("redis://127.0.0.1:6379", { maxRetriesPerRequest: null });
  queue = new Queue(QUEUE_NAME, { connection: redis, prefix, defaultJobOptions: JOB_OPTIONS });
  worker = new Worker<unknown, void>(
    QUEUE_NAME,
    async () => {
      throw new UnrecoverableError("a number the provider refuses");
    },
    { connection: redis, prefix },
  );
});

afterAll(async () => {
  await worker.close(true);
  await queue.obliterate({ force: true });
  await queue.close();
  await redis.quit();
});

const failed = (id: string) => until(async () => (await queue.getJobState(id)) === "failed", `${id} failing`);

describe("failed channel jobs", () => {
  it("are kept for retrying as long as results are, then dropped", async () => {
    expect(FAILED_JOB_TTL_S).toBe(RESULT_TTL_SECONDS);
    await queue.add("inbound", { kind: "answer", requestId: "old" }, { jobId: "old" });
    await failed("old");
    // The old job failed a day longer ago than results are kept.
    await redis.zadd(
      `${prefix}:${QUEUE_NAME}:failed`,
      Date.now() - (FAILED_JOB_TTL_S + 86_400) * 1000,
      "old",
    );
    await queue.add("inbound", { kind: "answer", requestId: "recent" }, { jobId: "recent" });
    await failed("recent");
    expect(await queue.getJob("old")).toBeUndefined();
    expect(await redis.exists(`${prefix}:${QUEUE_NAME}:old`)).toBe(0);
    expect((await queue.getFailed()).map((j) => j.id)).toEqual(["recent"]);
  });
});
