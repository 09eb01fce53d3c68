import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { CLAIM_SECONDS, LAST_HOLDER_SECONDS, REVIEW_PAGE_CASES, SETTLE_LEASE_SECONDS } from "../limits.js";

import type { ResultStore } from "../results/store.js";
import type { Decision, ReviewReason, StoredResult } from "../results/types.js";

/** Whether an extension officer will look at this result: it is in the review queue, not yet answered. */
export function awaitsOfficer(stored: StoredResult): boolean {
  return stored.review !== undefined && stored.review.decision === undefined;
}

export interface OpenCase {
  stored: StoredResult;
  /** The officer answering it now, while their claim lasts. */
  claimedBy?: string;
}

export type ClaimOutcome = { ok: true } | { ok: false; by: string } | { ok: false; by: null };

export interface ReviewQueue {
  /** Puts a result in the queue (or adds a reason to its open case); a decided case stays decided. */
  add(stored: StoredResult, reason: ReviewReason): Promise<void>;
  /** Open cases, oldest first. */
  list(limit?: number): Promise<OpenCase[]>;
  count(): Promise<number>;
  /** Takes (or renews) the case for CLAIM_SECONDS; refused while someone else holds it, or once decided. */
  claim(requestId: string, officer: string): Promise<ClaimOutcome>;
  release(requestId: string, officer: string): Promise<void>;
  /** Who holds the case now, if anyone. */
  holder(requestId: string): Promise<string | undefined>;
  /** Whether the case waits in the queue (not answered, not expired). */
  isOpen(requestId: string): Promise<boolean>;
  /** Takes the case out of the queue, with its claims (its result was deleted). */
  remove(requestId: string): Promise<void>;
  /**
   * Renews the officer's claim, only if they hold it, or held it last and nobody took it since (their answer
   * would still count then): opening a case's page takes nothing new.
   */
  renew(requestId: string, officer: string): Promise<ClaimOutcome>;
  /**
   * Closes the case with the officer's answer, if they hold it, or held it last and their claim lapsed while
   * nobody took it (a long answer outlasts a claim); not once they gave it back, nor once it is answered. In the
   * same step the answer is
   * kept as unsettled, until `settled` says everything it leads to is done (answer.ts), so none of it is lost to
   * a failure after the case left the queue.
   */
  decide(requestId: string, decision: Decision): Promise<"done" | "not_claimed" | "gone">;
  /** Answers whose follow-up is not done yet. */
  unsettled(): Promise<UnsettledAnswer[]>;
  /**
   * Takes the follow-up of an unsettled answer for SETTLE_LEASE_SECONDS: a token to hand back, or undefined
   * while another process holds it or once it is settled.
   */
  leaseSettling(requestId: string): Promise<string | undefined>;
  /** Gives the lease back without settling (the follow-up failed: the next round takes it up). */
  releaseSettling(requestId: string, token: string): Promise<void>;
  settled(requestId: string, token: string): Promise<void>;
}

export interface UnsettledAnswer {
  requestId: string;
  decision: Decision;
}

interface Keys {
  open: string;
  claim(id: string): string;
  /** Who last claimed the case: a claim that lapsed unseen still lets them answer; releasing it does not. */
  lastHolder(id: string): string;
  settling: string;
  settleLease(id: string): string;
}

/** The parts that differ between Redis and memory: the open set and the claims. */
interface CaseIndex {
  enqueue(id: string, at: number): Promise<void>;
  ids(limit: number): Promise<string[]>;
  count(): Promise<number>;
  holder(id: string): Promise<string | undefined>;
  /** Claims an open case when free or already the officer's (renews either way); "" when it is not open. */
  take(id: string, officer: string): Promise<string>;
  /** take, but a free case only by whoever held it last; "" when it is not open, or free and not theirs. */
  renew(id: string, officer: string): Promise<string>;
  drop(id: string, officer: string): Promise<void>;
  /**
   * Atomically: if the case is open and the officer holds it, or held it last and nobody holds it now, release
   * the claim, dequeue the case and keep `decision` unsettled.
   */
  finish(id: string, officer: string, decision: string): Promise<boolean>;
  isOpen(id: string): Promise<boolean>;
  remove(id: string): Promise<void>;
  unsettled(): Promise<Array<[id: string, decision: string]>>;
  isUnsettled(id: string): Promise<boolean>;
  /** Only while `id` is unsettled and nobody holds its lease: the new lease's token. */
  lease(id: string, token: string): Promise<boolean>;
  /** Releases the lease if `token` still holds it; with `settle`, the answer leaves the unsettled ones too. */
  unlease(id: string, token: string, settle: boolean): Promise<void>;
}

export function createReviewQueue(
  store: ResultStore,
  redis: Redis | undefined,
  options: { prefix?: string; claimSeconds?: number } = {},
): ReviewQueue {
  const claimSeconds = options.claimSeconds ?? CLAIM_SECONDS;
  const prefix = options.prefix ?? "cd:";
  const index = redis
    ? redisIndex(
        redis,
        {
          open: `${prefix}review:open`,
          claim: (id) => `${prefix}review:claim:${id}`,
          lastHolder: (id) => `${prefix}review:last-holder:${id}`,
          settling: `${prefix}review:settling`,
          settleLease: (id) => `${prefix}review:settle-lease:${id}`,
        },
        claimSeconds,
      )
    : memoryIndex(claimSeconds);

  return {
    async add(stored, reason) {
      const id = stored.result.request_id;
      const review = stored.review;
      // Decided, also while what follows the decision is still being finished.
      if (review?.decision || (await index.isUnsettled(id))) return;
      if (review?.reasons.includes(reason) && (await index.isOpen(id))) return;
      const queuedAt = review?.queuedAt ?? new Date().toISOString();
      const reasons = [...new Set([...(review?.reasons ?? []), reason])];
      if (!(await store.setState(id, "review", { reasons, queuedAt }))) return;
      await index.enqueue(id, Date.parse(queuedAt));
    },
    async list(limit = REVIEW_PAGE_CASES) {
      const ids = await index.ids(limit);
      const cases = await Promise.all(
        ids.map(async (id): Promise<OpenCase | undefined> => {
          const stored = await store.get(id);
          if (!stored) {
            // The result expired with its 30 days: nothing left to answer.
            await index.remove(id);
            return undefined;
          }
          const claimedBy = await index.holder(id);
          return claimedBy ? { stored, claimedBy } : { stored };
        }),
      );
      return cases.filter((c): c is OpenCase => c !== undefined);
    },
    count: () => index.count(),
    async claim(requestId, officer) {
      const stored = await store.get(requestId);
      if (!stored?.review || stored.review.decision || !(await index.isOpen(requestId)))
        return { ok: false, by: null };
      const holder = await index.take(requestId, officer);
      return holder === officer ? { ok: true } : { ok: false, by: holder || null };
    },
    async renew(requestId, officer) {
      const stored = await store.get(requestId);
      if (!stored?.review || stored.review.decision) return { ok: false, by: null };
      const holder = await index.renew(requestId, officer);
      return holder === officer ? { ok: true } : { ok: false, by: holder || null };
    },
    release: (requestId, officer) => index.drop(requestId, officer),
    holder: (requestId) => index.holder(requestId),
    isOpen: (requestId) => index.isOpen(requestId),
    remove: (requestId) => index.remove(requestId),
    async decide(requestId, decision) {
      const stored = await store.get(requestId);
      if (!stored) return "gone";
      return (await index.finish(requestId, decision.officer, JSON.stringify(decision)))
        ? "done"
        : "not_claimed";
    },
    unsettled: async () =>
      (await index.unsettled()).map(([requestId, decision]) => ({
        requestId,
        decision: JSON.parse(decision) as Decision,
      })),
    async leaseSettling(requestId) {
      const token = randomUUID();
      return (await index.lease(requestId, token)) ? token : undefined;
    },
    releaseSettling: (requestId, token) => index.unlease(requestId, token, false),
    settled: (requestId, token) => index.unlease(requestId, token, true),
  };
}

// Compares and deletes in one step, so an officer whose claim lapsed and was taken cannot answer too, nor one
// holding a claim on a case answered meanwhile. A claim that lapsed while nobody took the case still lets the
// officer who held it last answer (a long answer outlasts it); one they gave back does not (a stale tab).
const FINISH = `local holder = redis.call('get', KEYS[1])
local last = redis.call('get', KEYS[4])
if (holder == ARGV[1] or ((not holder) and last == ARGV[1])) and redis.call('zscore', KEYS[2], ARGV[2]) then
  redis.call('del', KEYS[1], KEYS[4]); redis.call('zrem', KEYS[2], ARGV[2])
  redis.call('hset', KEYS[3], ARGV[2], ARGV[3])
  return 1
end
return 0`;
// Claims only an open case: the case may be answered between claim()'s look and this step.
const TAKE = `if not redis.call('zscore', KEYS[2], ARGV[3]) then return '' end
local holder = redis.call('get', KEYS[1])
if (not holder) or holder == ARGV[1] then
  redis.call('set', KEYS[1], ARGV[1], 'EX', ARGV[2]); redis.call('set', KEYS[3], ARGV[1], 'EX', ARGV[4])
  return ARGV[1]
end
return holder`;
const RENEW = `if not redis.call('zscore', KEYS[2], ARGV[3]) then return '' end
local holder = redis.call('get', KEYS[1])
if holder == ARGV[1] or ((not holder) and redis.call('get', KEYS[3]) == ARGV[1]) then
  redis.call('set', KEYS[1], ARGV[1], 'EX', ARGV[2]); redis.call('set', KEYS[3], ARGV[1], 'EX', ARGV[4])
  return ARGV[1]
end
return holder or ''`;
const DROP = `if redis.call('get', KEYS[1]) == ARGV[1] then redis.call('del', KEYS[1]) end
if redis.call('get', KEYS[2]) == ARGV[1] then redis.call('del', KEYS[2]) end
return 0`;
// An answer settled meanwhile (by a process that listed it later) is not taken up again.
const LEASE = `if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then return 0 end
if redis.call('set', KEYS[2], ARGV[2], 'NX', 'EX', ARGV[3]) then return 1 end
return 0`;
// Only the lease's holder releases it: one whose lease ran out must not free the next holder's.
const UNLEASE = `if ARGV[3] == '1' then redis.call('hdel', KEYS[1], ARGV[1]) end
if redis.call('get', KEYS[2]) == ARGV[2] then redis.call('del', KEYS[2]) end
return 0`;

function redisIndex(redis: Redis, keys: Keys, claimSeconds: number): CaseIndex {
  /** TAKE or RENEW: the holder afterwards, "" when the case is not open (or, for RENEW, free and not theirs). */
  const claimBy = async (script: string, id: string, officer: string) =>
    String(
      await redis.eval(
        script,
        3,
        keys.claim(id),
        keys.open,
        keys.lastHolder(id),
        officer,
        claimSeconds,
        id,
        LAST_HOLDER_SECONDS,
      ),
    );
  return {
    async enqueue(id, at) {
      await redis.zadd(keys.open, "NX", String(at), id);
    },
    ids: (limit) => redis.zrange(keys.open, "0", String(limit - 1)),
    count: () => redis.zcard(keys.open),
    holder: async (id) => (await redis.get(keys.claim(id))) ?? undefined,
    take: (id, officer) => claimBy(TAKE, id, officer),
    renew: (id, officer) => claimBy(RENEW, id, officer),
    async drop(id, officer) {
      await redis.eval(DROP, 2, keys.claim(id), keys.lastHolder(id), officer);
    },
    finish: async (id, officer, decision) =>
      (await redis.eval(
        FINISH,
        4,
        keys.claim(id),
        keys.open,
        keys.settling,
        keys.lastHolder(id),
        officer,
        id,
        decision,
      )) === 1,
    isOpen: async (id) => (await redis.zscore(keys.open, id)) !== null,
    async remove(id) {
      await redis.multi().zrem(keys.open, id).del(keys.claim(id), keys.lastHolder(id)).exec();
    },
    unsettled: async () => Object.entries(await redis.hgetall(keys.settling)),
    isUnsettled: async (id) => (await redis.hexists(keys.settling, id)) === 1,
    lease: async (id, token) =>
      (await redis.eval(LEASE, 2, keys.settling, keys.settleLease(id), id, token, SETTLE_LEASE_SECONDS)) ===
      1,
    async unlease(id, token, settle) {
      await redis.eval(UNLEASE, 2, keys.settling, keys.settleLease(id), id, token, settle ? 1 : 0);
    },
  };
}

function memoryIndex(claimSeconds: number): CaseIndex {
  const open = new Map<string, number>();
  const claims = new Map<string, { officer: string; expires: number }>();
  const settling = new Map<string, string>();
  const leases = new Map<string, { token: string; expires: number }>();
  const holder = (id: string) => {
    const claim = claims.get(id);
    return claim && claim.expires > Date.now() ? claim.officer : undefined;
  };
  return {
    async enqueue(id, at) {
      if (!open.has(id)) open.set(id, at);
    },
    ids: async (limit) =>
      [...open.entries()]
        .sort((a, b) => a[1] - b[1])
        .slice(0, limit)
        .map(([id]) => id),
    count: async () => open.size,
    holder: async (id) => holder(id),
    async take(id, officer) {
      if (!open.has(id)) return "";
      const current = holder(id);
      if (current && current !== officer) return current;
      claims.set(id, { officer, expires: Date.now() + claimSeconds * 1000 });
      return officer;
    },
    async renew(id, officer) {
      if (!open.has(id)) return "";
      const current = holder(id);
      if (current !== officer && (current || claims.get(id)?.officer !== officer)) return current ?? "";
      claims.set(id, { officer, expires: Date.now() + claimSeconds * 1000 });
      return officer;
    },
    // An entry outlives its claim: its officer is who claimed the case last (see FINISH).
    async drop(id, officer) {
      if (claims.get(id)?.officer === officer) claims.delete(id);
    },
    async finish(id, officer, decision) {
      const current = holder(id);
      const last = claims.get(id)?.officer;
      if (!(current === officer || (!current && last === officer)) || !open.has(id)) return false;
      claims.delete(id);
      open.delete(id);
      settling.set(id, decision);
      return true;
    },
    isOpen: async (id) => open.has(id),
    async remove(id) {
      open.delete(id);
      claims.delete(id);
    },
    unsettled: async () => [...settling.entries()],
    isUnsettled: async (id) => settling.has(id),
    async lease(id, token) {
      if (!settling.has(id) || (leases.get(id)?.expires ?? 0) > Date.now()) return false;
      leases.set(id, { token, expires: Date.now() + SETTLE_LEASE_SECONDS * 1000 });
      return true;
    },
    async unlease(id, token, settle) {
      if (settle) settling.delete(id);
      if (leases.get(id)?.token === token) leases.delete(id);
    },
  };
}
