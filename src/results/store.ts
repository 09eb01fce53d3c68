import type { Redis } from "ioredis";
import type { DiagnosisResult, Language } from "../diagnosis/types.js";
import { RESULT_TTL_SECONDS, RESULTS_PER_OWNER } from "../limits.js";
import { newShortCode } from "./short-code.js";
import type { Decision, Feedback, ResultMeta, Review, StoredResult } from "./types.js";

export { RESULT_TTL_SECONDS };

export interface SaveInput extends Omit<ResultMeta, "review" | "feedback"> {
  result: DiagnosisResult;
  language: Language;
  owner?: string;
}

/** The parts of a stored result that change after it is saved, each written on its own. */
export interface ResultState {
  review?: Review;
  decision?: Decision;
  feedback?: Feedback;
}

export interface ResultStore {
  /** Stores the result (the photo lives in the photo store) under its request_id and a fresh short code. */
  save(input: SaveInput): Promise<StoredResult>;
  get(requestId: string): Promise<StoredResult | undefined>;
  getByCode(code: string): Promise<StoredResult | undefined>;
  /** The owner's (phone number or chat) latest result that answers them (see `answersTheFarmer`). */
  lastFor(owner: string): Promise<StoredResult | undefined>;
  /** Makes `requestId` the owner's latest answer: an officer just answered it. */
  setLast(owner: string, requestId: string): Promise<void>;
  /** The result whose summary the owner was sent last (their photo's, or one they looked up by code). */
  shownFor(owner: string): Promise<StoredResult | undefined>;
  setShown(owner: string, requestId: string): Promise<void>;
  /** The owner's results, newest first (at most RESULTS_PER_OWNER are indexed). */
  listFor(owner: string): Promise<StoredResult[]>;
  /** Sets one part of a stored result's state; false when the result is gone. */
  setState<K extends keyof ResultState>(requestId: string, key: K, value: ResultState[K]): Promise<boolean>;
  /** Deletes these results of the owner (listFor's), with their codes, and the owner's index and pointers. */
  forgetOwner(owner: string, results: StoredResult[]): Promise<void>;
}

/**
 * Whether a result is what a farmer asking for "my last diagnosis" means: a disease named, or a healthy
 * plant, from a photo good enough to judge. A later photo that gave no such answer (blurry, not a plant,
 * unsure, a crop not covered) does not hide it.
 */
export function answersTheFarmer(result: DiagnosisResult): boolean {
  return (
    (result.outcome === "diagnosed" || result.outcome === "healthy") && !result.image_analysis.quality_issue
  );
}

export interface StoreOptions {
  /** Key prefix, so tests and deployments sharing one Redis do not collide. */
  prefix?: string;
  /** Bound of the in-memory double. */
  maxEntries?: number;
  ttlSeconds?: number;
}

export function createResultStore(redis: Redis | undefined, options: StoreOptions = {}): ResultStore {
  return redis ? redisStore(redis, options) : memoryStore(options);
}

const MAX_CODE_TRIES = 8;

function withState(stored: StoredResult, state: ResultState): StoredResult {
  const review = state.review && { ...state.review, ...(state.decision ? { decision: state.decision } : {}) };
  return {
    ...stored,
    ...(review ? { review } : {}),
    ...(state.feedback ? { feedback: state.feedback } : {}),
  };
}

/** A re-saved result keeps what happened to it since (review, feedback). */
function keepState(stored: StoredResult, existing: StoredResult | undefined): StoredResult {
  if (!existing) return stored;
  const { review, feedback } = existing;
  return { ...stored, ...(review ? { review } : {}), ...(feedback ? { feedback } : {}) };
}

function storedFrom(input: SaveInput, code: string): StoredResult {
  const { result, language, ...meta } = input;
  const clean = Object.fromEntries(Object.entries(meta).filter(([, v]) => v !== undefined));
  return { ...clean, result, code, language, createdAt: new Date().toISOString() };
}

function redisStore(
  redis: Redis,
  { prefix = "cd:", ttlSeconds = RESULT_TTL_SECONDS }: StoreOptions,
): ResultStore {
  const resultKey = (id: string) => `${prefix}result:${id}`;
  const stateKey = (id: string) => `${prefix}result-state:${id}`;
  const codeKey = (code: string) => `${prefix}code:${code}`;
  const lastKey = (owner: string) => `${prefix}last:${owner}`;
  const ownerKey = (owner: string) => `${prefix}owner-results:${owner}`;
  const shownKey = (owner: string) => `${prefix}shown:${owner}`;

  async function read(requestId: string | null): Promise<StoredResult | undefined> {
    if (!requestId) return undefined;
    const [[, raw], [, state]] = (await redis
      .multi()
      .get(resultKey(requestId))
      .hgetall(stateKey(requestId))
      .exec()) as [[null, string | null], [null, Record<string, string>]];
    if (!raw) return undefined;
    const parsed = Object.fromEntries(
      Object.entries(state).map(([k, v]) => [k, JSON.parse(v)]),
    ) as ResultState;
    return withState(JSON.parse(raw) as StoredResult, parsed);
  }

  async function claimCode(requestId: string): Promise<string> {
    for (let i = 0; i < MAX_CODE_TRIES; i++) {
      const code = newShortCode();
      // SET NX makes the claim atomic across API and worker instances.
      if (await redis.set(codeKey(code), requestId, "EX", ttlSeconds, "NX")) return code;
    }
    throw new Error("could not allocate a free short code");
  }

  return {
    async save(input) {
      const id = input.result.request_id;
      // A retried job saves the same request again: it keeps its first code and its state.
      const existing = await read(id);
      const code = existing?.code ?? (await claimCode(id));
      const stored = storedFrom(input, code);
      // The code lives exactly as long as the result it names: a re-save renews both together.
      const tx = redis
        .multi()
        .set(resultKey(id), JSON.stringify(stored), "EX", ttlSeconds)
        .set(codeKey(code), id, "EX", ttlSeconds)
        .expire(stateKey(id), ttlSeconds);
      if (input.owner) {
        const index = ownerKey(input.owner);
        if (answersTheFarmer(input.result)) tx.set(lastKey(input.owner), id, "EX", ttlSeconds);
        tx.zadd(index, String(Date.parse(stored.createdAt)), id)
          .zremrangebyrank(index, 0, -RESULTS_PER_OWNER - 1)
          .expire(index, ttlSeconds);
      }
      await tx.exec();
      return keepState(stored, existing);
    },
    get: (requestId) => read(requestId),
    getByCode: async (code) => read(await redis.get(codeKey(code))),
    lastFor: async (owner) => read(await redis.get(lastKey(owner))),
    async setLast(owner, requestId) {
      await redis.set(lastKey(owner), requestId, "EX", ttlSeconds);
    },
    shownFor: async (owner) => read(await redis.get(shownKey(owner))),
    async setShown(owner, requestId) {
      await redis.set(shownKey(owner), requestId, "EX", ttlSeconds);
    },
    async listFor(owner) {
      const ids = await redis.zrevrange(ownerKey(owner), 0, -1);
      const found = await Promise.all(ids.map((id) => read(id)));
      return found.filter((s): s is StoredResult => s !== undefined);
    },
    async forgetOwner(owner, results) {
      const tx = redis.multi().del(ownerKey(owner), lastKey(owner), shownKey(owner));
      for (const { result, code } of results)
        tx.del(resultKey(result.request_id), stateKey(result.request_id), codeKey(code));
      await tx.exec();
    },
    async setState(requestId, key, value) {
      const ttl = await redis.ttl(resultKey(requestId));
      if (ttl <= 0) return false;
      await redis
        .multi()
        .hset(stateKey(requestId), key, JSON.stringify(value))
        .expire(stateKey(requestId), ttl)
        .exec();
      return true;
    },
  };
}

// Without Redis the API runs alone on one machine: a bounded map keeps memory flat under load.
function memoryStore({ maxEntries = 10_000, ttlSeconds = RESULT_TTL_SECONDS }: StoreOptions): ResultStore {
  type Entry = { stored: StoredResult; state: ResultState; expires: number };
  const results = new Map<string, Entry>();
  const codes = new Map<string, string>();
  const last = new Map<string, string>();
  const shown = new Map<string, string>();
  const byOwner = new Map<string, string[]>();

  function entry(requestId: string | undefined): Entry | undefined {
    if (!requestId) return undefined;
    const found = results.get(requestId);
    if (!found) return undefined;
    if (found.expires <= Date.now()) {
      forget(requestId, found.stored);
      return undefined;
    }
    // Re-insert to mark it recently used.
    results.delete(requestId);
    results.set(requestId, found);
    return found;
  }

  const read = (requestId: string | undefined) => {
    const found = entry(requestId);
    return found && withState(found.stored, found.state);
  };

  function forget(requestId: string, stored: StoredResult) {
    results.delete(requestId);
    codes.delete(stored.code);
    if (stored.owner && last.get(stored.owner) === requestId) last.delete(stored.owner);
  }

  return {
    async save(input) {
      const id = input.result.request_id;
      const existing = entry(id);
      let code = existing?.stored.code;
      while (!code) {
        const candidate = newShortCode();
        if (!codes.has(candidate)) code = candidate;
      }
      const stored = storedFrom(input, code);
      const state = existing?.state ?? {};
      results.delete(id);
      results.set(id, { stored, state, expires: Date.now() + ttlSeconds * 1000 });
      codes.set(code, id);
      if (input.owner) {
        if (answersTheFarmer(input.result)) last.set(input.owner, id);
        const ids = [id, ...(byOwner.get(input.owner) ?? []).filter((other) => other !== id)];
        byOwner.set(input.owner, ids.slice(0, RESULTS_PER_OWNER));
      }
      while (results.size > maxEntries) {
        const [oldestId, oldest] = results.entries().next().value as [string, Entry];
        forget(oldestId, oldest.stored);
      }
      return withState(stored, state);
    },
    get: async (requestId) => read(requestId),
    getByCode: async (code) => read(codes.get(code)),
    lastFor: async (owner) => read(last.get(owner)),
    async setLast(owner, requestId) {
      last.set(owner, requestId);
    },
    shownFor: async (owner) => read(shown.get(owner)),
    async setShown(owner, requestId) {
      shown.set(owner, requestId);
    },
    async listFor(owner) {
      return (byOwner.get(owner) ?? [])
        .map((id) => read(id))
        .filter((s): s is StoredResult => s !== undefined);
    },
    async setState(requestId, key, value) {
      const found = entry(requestId);
      if (!found) return false;
      found.state[key] = value;
      return true;
    },
    async forgetOwner(owner, gone) {
      for (const stored of gone) forget(stored.result.request_id, stored);
      byOwner.delete(owner);
      last.delete(owner);
      shown.delete(owner);
    },
  };
}
