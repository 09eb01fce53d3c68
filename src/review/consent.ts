import type { Redis } from "ioredis";

/**
 * What a farmer was told about keeping their photos, and whether they said no. Chat channels tell them in
 * their first message; a refusal stands until they take it back.
 */
export interface ConsentRecord {
  status: "informed" | "refused";
  at: string;
}

export interface ConsentStore {
  get(owner: string): Promise<ConsentRecord | undefined>;
  /** Records that the farmer was told; true the first time only (when the notice must be sent). */
  inform(owner: string): Promise<boolean>;
  set(owner: string, status: ConsentRecord["status"]): Promise<void>;
  /** Forgets that the farmer was told (their data is deleted); a refusal stays, and goes on being honoured. */
  forgetInformed(owner: string): Promise<void>;
}

export function createConsentStore(
  redis: Redis | undefined,
  options: { prefix?: string } = {},
): ConsentStore {
  const prefix = options.prefix ?? "cd:";
  const now = () => new Date().toISOString();
  if (redis) {
    const key = (owner: string) => `${prefix}consent:${owner}`;
    return {
      async get(owner) {
        const raw = await redis.get(key(owner));
        return raw ? (JSON.parse(raw) as ConsentRecord) : undefined;
      },
      async inform(owner) {
        const record: ConsentRecord = { status: "informed", at: now() };
        return (await redis.set(key(owner), JSON.stringify(record), "NX")) === "OK";
      },
      async set(owner, status) {
        await redis.set(key(owner), JSON.stringify({ status, at: now() } satisfies ConsentRecord));
      },
      async forgetInformed(owner) {
        await redis.eval(DELETE_INFORMED, 1, key(owner));
      },
    };
  }
  const records = new Map<string, ConsentRecord>();
  return {
    get: async (owner) => records.get(owner),
    async inform(owner) {
      if (records.has(owner)) return false;
      records.set(owner, { status: "informed", at: now() });
      return true;
    },
    async set(owner, status) {
      records.set(owner, { status, at: now() });
    },
    async forgetInformed(owner) {
      if (records.get(owner)?.status === "informed") records.delete(owner);
    },
  };
}

// One step: a refusal recorded in between is never deleted.
const DELETE_INFORMED = `
local raw = redis.call("GET", KEYS[1])
if raw and cjson.decode(raw).status == "informed" then redis.call("DEL", KEYS[1]) end
return 0`;
