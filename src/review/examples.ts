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
  save(example: LabelledExample, photo: StoredPhoto): Promise<void>;
  list(): Promise<LabelledExample[]>;
  photo(id: string): Promise<StoredPhoto | undefined>;
  get(id: string): Promise<LabelledExample | undefined>;
  delete(id: string): Promise<boolean>;
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
  const get = async (id: string) => {
    const meta = await redis.hget(key(id), "meta");
    return meta ? (JSON.parse(meta) as LabelledExample) : undefined;
  };
  return {
    async save(example, photo) {
      await redis
        .multi()
        .hset(key(example.id), { meta: JSON.stringify(example), type: photo.type, data: photo.data })
        .zadd(all, String(Date.parse(example.decidedAt)), example.id)
        .exec();
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
  };
}

function memoryExamples(): ExampleStore {
  const examples = createPhotoMap((entry: { example: LabelledExample; photo: StoredPhoto }) => entry.photo);
  return {
    async save(example, photo) {
      examples.set(example.id, { example, photo });
    },
    list: async () => [...examples.values()].map((e) => e.example),
    photo: async (id) => examples.get(id)?.photo,
    get: async (id) => examples.get(id)?.example,
    delete: async (id) => examples.delete(id),
  };
}
