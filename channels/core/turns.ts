import type { Redis } from "ioredis";
import { COMPLETED_JOB_TTL_S } from "../limits.js";

/**
 * The order of one farmer's jobs. BullMQ runs jobs in parallel and retries a failed one later, so a
 * farmer's "aide" sent after a photo could be answered first. Each job therefore names the job queued
 * before it for the same farmer (`after`) and only runs once that one is finished (completed, or failed for
 * good): a chain per conversation, while jobs of different farmers still run side by side. A waiting job
 * sleeps as a delayed job and is woken by its predecessor when that one finishes (with a periodic look as
 * the fallback), so no worker slot is held while it waits.
 */
export interface Turns {
  /**
   * The job queued before `jobId` in `conversation` (undefined for the first), recording `jobId` as the
   * latest. Asked again for the same job (a webhook the provider retries), it gives the same answer.
   */
  claim(conversation: string, jobId: string): Promise<string | undefined>;
  /** `jobId` waits for `after`: `after`'s end wakes it. */
  wait(after: string, jobId: string): Promise<void>;
  /** The job waiting for `jobId`, if one registered. */
  waiter(jobId: string): Promise<string | undefined>;
}

// One round trip and atomic, so two webhooks of one farmer arriving together still form one chain.
const CLAIM = `
local known = redis.call('GET', KEYS[2])
if known then return known end
local previous = redis.call('GET', KEYS[1]) or ''
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
redis.call('SET', KEYS[2], previous, 'EX', ARGV[2])
return previous`;

export function createTurns(redis: Redis, keyPrefix: string): Turns {
  const key = (kind: string, id: string) => `${keyPrefix}:turn:${kind}:${id}`;
  return {
    async claim(conversation, jobId) {
      const previous = (await redis.eval(
        CLAIM,
        2,
        key("last", conversation),
        key("after", jobId),
        jobId,
        COMPLETED_JOB_TTL_S,
      )) as string;
      return previous || undefined;
    },
    async wait(after, jobId) {
      await redis.set(key("waiter", after), jobId, "EX", COMPLETED_JOB_TTL_S);
    },
    async waiter(jobId) {
      return (await redis.get(key("waiter", jobId))) ?? undefined;
    },
  };
}
