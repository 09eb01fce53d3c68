import type { Redis } from "ioredis";
import { createPhotoMap } from "../results/memory-photos.js";
import type { StoredPhoto } from "../results/photos.js";
import type { DecisionKind, Source } from "../results/types.js";

/** A photo an officer labelled, kept for training until someone deletes it. */
export interface LabelledExample {
  /** The request id of the diagnosis it came from. */
  id: string;
  code: string;
  label: string;
  source: Source;
  region: string;
  /** When the photo was sent. */
  takenAt: string;
  decision: DecisionKind;
  officer: string;
  decidedAt: string;
  /** How the farmer agreed: told on first contact and did not refuse, or agreed in a partner's request. */
  consent: { basis: "informed_no_objection" | "partner_attested" | "staff_recorded"; at: string };
  /** The model's own reading at the time, for whoever studies its mistakes. */
  modelOutcome: string;
  modelTop?: string;
}

export interface ExampleStore {
  /**
   * `owner`: the farmer key the photo came from, indexed apart from the example (never exported), so that their
   * refusal can take back what was kept before it.
   */
  save(example: LabelledExample, photo: StoredPhoto, owner?: string): Promise<void>;
  list(): Promise<LabelledExample[]>;
  photo(id: string): Promise<StoredPhoto | undefined>;
  get(id: string): Promise<LabelledExample | undefined>;
  delete(id: string): Promise<boolean>;
  /** Deletes every example kept from `owner`'s photos; how many. */
  deleteOwner(owner: string): Promise<number>;
}

export function createExampleStore(
  redis: Redis | undefined,
  options: { prefix?: string } = {},
): ExampleStore {
  return redis ? redisExamples(redis, options.prefix ?? "cd:") : memoryExamples();
}

// No TTL: labelled examples are the training data of the next model, kept until deleted (Redis with AOF,
// as deploy/compose.yaml runs it, keeps them across restarts).
function redisExamples(redis: Redis, prefix: string): ExampleStore {
  const all = `${prefix}examples`;
  const key = (id: string) => `${prefix}example:${id}`;
  const byOwner = (owner: string) => `${prefix}examples:owner:${owner}`;
  const get = async (id: string) => {
    const meta = await redis.hget(key(id), "meta");
    return meta ? (JSON.parse(meta) as LabelledExample) : undefined;
  };
  return {
    async save(example, photo, owner) {
      const tx = redis
        .multi()
        .hset(key(example.id), { meta: JSON.stringify(example), type: photo.type, data: photo.data })
        .zadd(all, String(Date.parse(example.decidedAt)), example.id);
      if (owner) tx.sadd(byOwner(owner), example.id);
      await tx.exec();
    },
    async list() {
      const ids = await redis.zrange(all, "0", "-1");
      const found = await Promise.all(ids.map(get));
      return found.filter((e): e is LabelledExample => e !== undefined);
    },
    async photo(id) {
      const [type, data] = await redis.hmgetBuffer(key(id), "type", "data");
      return type && data ? { type: type.toString(), data } : undefined;
    },
    get,
    async delete(id) {
      const [[, removed]] = (await redis.multi().del(key(id)).zrem(all, id).exec()) as [[null, number]];
      return removed > 0;
    },
    async deleteOwner(owner) {
      const ids = await redis.smembers(byOwner(owner));
      const tx = redis.multi().del(byOwner(owner));
      for (const id of ids) tx.del(key(id)).zrem(all, id);
      // Each id's zrem says whether it was still kept (an administrator may have deleted it since).
      const replies = ((await tx.exec()) ?? []) as [Error | null, number][];
      return replies.filter((_, i) => i > 0 && i % 2 === 0).filter(([, removed]) => removed > 0).length;
    },
  };
}

function memoryExamples(): ExampleStore {
  const examples = createPhotoMap((entry: { example: LabelledExample; photo: StoredPhoto }) => entry.photo);
  const owners = new Map<string, Set<string>>();
  return {
    async save(example, photo, owner) {
      examples.set(example.id, { example, photo });
      if (owner) owners.set(owner, (owners.get(owner) ?? new Set()).add(example.id));
    },
    list: async () => [...examples.values()].map((e) => e.example),
    photo: async (id) => examples.get(id)?.photo,
    get: async (id) => examples.get(id)?.example,
    delete: async (id) => examples.delete(id),
    async deleteOwner(owner) {
      const ids = [...(owners.get(owner) ?? [])];
      owners.delete(owner);
      return ids.filter((id) => examples.delete(id)).length;
    },
  };
}
