import type { Redis } from "ioredis";
import type { DiagnosisResult, Language } from "../diagnosis/types.js";
import { newShortCode } from "./short-code.js";
import type { StoredResult } from "./types.js";

export const RESULT_TTL_SECONDS = 30 * 24 * 3600;

export interface SaveInput {
  result: DiagnosisResult;
  language: Language;
  owner?: string;
}

export interface ResultStore {
  /** Stores the result (never the image) under its request_id and a fresh short code. */
  save(input: SaveInput): Promise<StoredResult>;
  get(requestId: string): Promise<StoredResult | undefined>;
  getByCode(code: string): Promise<StoredResult | undefined>;
  /** The owner's (phone number or chat) latest result. */
  lastFor(owner: string): Promise<StoredResult | undefined>;
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

function redisStore(
  redis: Redis,
  { prefix = "cd:", ttlSeconds = RESULT_TTL_SECONDS }: StoreOptions,
): ResultStore {
  const resultKey = (id: string) => `${prefix}result:${id}`;
  const codeKey = (code: string) => `${prefix}code:${code}`;
  const lastKey = (owner: string) => `${prefix}last:${owner}`;

  async function read(requestId: string | null): Promise<StoredResult | undefined> {
    if (!requestId) return undefined;
    const raw = await redis.get(resultKey(requestId));
    return raw ? (JSON.parse(raw) as StoredResult) : undefined;
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
    async save({ result, language, owner }) {
      // A retried job saves the same request again: it keeps its first code.
      const existing = await read(result.request_id);
      const code = existing?.code ?? (await claimCode(result.request_id));
      const stored: StoredResult = { result, code, language, createdAt: new Date().toISOString() };
      if (owner) stored.owner = owner;
      // The code lives exactly as long as the result it names: a re-save renews both together.
      const tx = redis
        .multi()
        .set(resultKey(result.request_id), JSON.stringify(stored), "EX", ttlSeconds)
        .set(codeKey(code), result.request_id, "EX", ttlSeconds);
      if (owner) tx.set(lastKey(owner), result.request_id, "EX", ttlSeconds);
      await tx.exec();
      return stored;
    },
    get: (requestId) => read(requestId),
    getByCode: async (code) => read(await redis.get(codeKey(code))),
    lastFor: async (owner) => read(await redis.get(lastKey(owner))),
  };
}

// Without Redis the API runs alone on one machine: a bounded map keeps memory flat under load.
function memoryStore({ maxEntries = 10_000, ttlSeconds = RESULT_TTL_SECONDS }: StoreOptions): ResultStore {
  const results = new Map<string, { stored: StoredResult; expires: number }>();
  const codes = new Map<string, string>();
  const last = new Map<string, string>();

  function read(requestId: string | undefined): StoredResult | undefined {
    if (!requestId) return undefined;
    const entry = results.get(requestId);
    if (!entry) return undefined;
    if (entry.expires <= Date.now()) {
      forget(requestId, entry.stored);
      return undefined;
    }
    // Re-insert to mark it recently used.
    results.delete(requestId);
    results.set(requestId, entry);
    return entry.stored;
  }

  function forget(requestId: string, stored: StoredResult) {
    results.delete(requestId);
    codes.delete(stored.code);
    if (stored.owner && last.get(stored.owner) === requestId) last.delete(stored.owner);
  }

  return {
    async save({ result, language, owner }) {
      const existing = read(result.request_id);
      let code = existing?.code;
      while (!code) {
        const candidate = newShortCode();
        if (!codes.has(candidate)) code = candidate;
      }
      const stored: StoredResult = { result, code, language, createdAt: new Date().toISOString() };
      if (owner) stored.owner = owner;
      results.delete(result.request_id);
      results.set(result.request_id, { stored, expires: Date.now() + ttlSeconds * 1000 });
      codes.set(code, result.request_id);
      if (owner) last.set(owner, result.request_id);
      while (results.size > maxEntries) {
        const [oldestId, oldest] = results.entries().next().value as [string, { stored: StoredResult }];
        forget(oldestId, oldest.stored);
      }
      return stored;
    },
    get: async (requestId) => read(requestId),
    getByCode: async (code) => read(codes.get(code)),
    lastFor: async (owner) => read(last.get(owner)),
  };
}
