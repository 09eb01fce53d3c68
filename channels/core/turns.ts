import type { Redis } from "ioredis";
import { COMPLETED_JOB_TTL_S } from "../limits.js";

/**
 * The order of one farmer's jobs. BullMQ runs jobs in parallel and retries a failed one later, so a
 * farmer's "aide" sent after a photo could be answered first. Each job therefore names the job queued
 * before it for the same farmer (`after`) and only runs once that one is finished (completed, or failed for
 * good): a chain per conversation, while jobs of different farmers still run side by side. A waiting job
 * sleeps as a delayed job and is woken by its predecessor when that one finishes (with a periodic look as
 * the fallback), so no worker slot is held while it waits.
 *
 * The chain lives in Redis as links both ways (`after`, `next`) and the conversation's latest job (`last`),
 * so that a job failed for good and put back by an operator (`npm run jobs retry`) can leave its place and
 * join the end: it then runs after every job of the farmer queued so far, and the farmer's next messages wait
 * for it, as if the message had just arrived.
 */
export interface Turns {
  /**
   * The job queued before `jobId` in `conversation` (undefined for the first), recording `jobId` as the
   * latest. Asked again for the same job (a webhook the provider retries), it gives the same answer.
   */
  claim(conversation: string, jobId: string): Promise<string | undefined>;
  /**
   * Moves `jobId` to the end of `conversation`'s chain (the job that waited for it now waits for the one
   * before it) and gives its new predecessor (undefined when there is none). The latest job stays put.
   */
  requeue(conversation: string, jobId: string): Promise<string | undefined>;
  /**
   * The job `jobId` waits for as the chain stands now: undefined for none, null when the chain does not know
   * `jobId` (never claimed, or its links expired with COMPLETED_JOB_TTL_S).
   */
  after(jobId: string): Promise<string | undefined | null>;
  /** `jobId` waits for `after`: `after`'s end wakes it. */
  wait(after: string, jobId: string): Promise<void>;
  /** The job waiting for `jobId`, if one registered. */
  waiter(jobId: string): Promise<string | undefined>;
  /** `jobId` completed: its followers may run even after the queue has removed it. */
  finish(jobId: string): Promise<void>;
  /** Whether `jobId` completed (recorded for COMPLETED_JOB_TTL_S). */
  finished(jobId: string): Promise<boolean>;
}

// One round trip and atomic, so two webhooks of one farmer arriving together still form one chain.
// KEYS: last:<conversation>, after:<job>; ARGV: job, ttl, the key prefix of the links.
const CLAIM = `
local known = redis.call('GET', KEYS[2])
if known then return known end
local previous = redis.call('GET', KEYS[1]) or ''
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
redis.call('SET', KEYS[2], previous, 'EX', ARGV[2])
if previous ~= '' then redis.call('SET', ARGV[3] .. 'next:' .. previous, ARGV[1], 'EX', ARGV[2]) end
return previous`;

// Unlinks the job (its follower now follows its predecessor) and links it after the latest, atomically, so a
// message arriving meanwhile is chained after it. KEYS: last:<conversation>, after:<job>, next:<job>.
const REQUEUE = `
local last = redis.call('GET', KEYS[1])
if last == ARGV[1] then return redis.call('GET', KEYS[2]) or '' end
local previous = redis.call('GET', KEYS[2]) or ''
local following = redis.call('GET', KEYS[3])
if following then
  redis.call('SET', ARGV[3] .. 'after:' .. following, previous, 'EX', ARGV[2])
  if previous ~= '' then redis.call('SET', ARGV[3] .. 'next:' .. previous, following, 'EX', ARGV[2]) end
elseif previous ~= '' and redis.call('GET', ARGV[3] .. 'next:' .. previous) == ARGV[1] then
  redis.call('DEL', ARGV[3] .. 'next:' .. previous)
end
local tail = last or ''
redis.call('SET', KEYS[2], tail, 'EX', ARGV[2])
redis.call('DEL', KEYS[3])
if tail ~= '' then redis.call('SET', ARGV[3] .. 'next:' .. tail, ARGV[1], 'EX', ARGV[2]) end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return tail`;

export function createTurns(redis: Redis, keyPrefix: string): Turns {
  const links = `${keyPrefix}:turn:`;
  const key = (kind: string, id: string) => `${links}${kind}:${id}`;
  return {
    async claim(conversation, jobId) {
      const previous = (await redis.eval(
        CLAIM,
        2,
        key("last", conversation),
        key("after", jobId),
        jobId,
        COMPLETED_JOB_TTL_S,
        links,
      )) as string;
      return previous || undefined;
    },
    async requeue(conversation, jobId) {
      const previous = (await redis.eval(
        REQUEUE,
        3,
        key("last", conversation),
        key("after", jobId),
        key("next", jobId),
        jobId,
        COMPLETED_JOB_TTL_S,
        links,
      )) as string;
      return previous || undefined;
    },
    async after(jobId) {
      const previous = await redis.get(key("after", jobId));
      return previous === null ? null : previous || undefined;
    },
    async wait(after, jobId) {
      await redis.set(key("waiter", after), jobId, "EX", COMPLETED_JOB_TTL_S);
    },
    async waiter(jobId) {
      return (await redis.get(key("waiter", jobId))) ?? undefined;
    },
    async finish(jobId) {
      await redis.set(key("done", jobId), "1", "EX", COMPLETED_JOB_TTL_S);
    },
    async finished(jobId) {
      return (await redis.exists(key("done", jobId))) === 1;
    },
  };
}
