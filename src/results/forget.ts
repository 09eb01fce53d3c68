import type { Redis } from "ioredis";
import { FORGET_CONFIRM_SECONDS } from "../limits.js";
import type { Records } from "./records.js";

/** What forgetting a farmer deleted. */
export interface Forgotten {
  results: number;
  examples: number;
}

/**
 * A farmer asked for everything kept about them to be deleted (or an officer did it for them): their results
 * with their photos, codes and review cases, the messages sent to them, the labelled examples made from their
 * photos, and the record that they were told about keeping photos. The photos and examples go before the
 * index that finds them, so a deletion that fails part-way is finished by running it again. What stays: the
 * outbreak counts (per disease, region and week, naming nobody) and a refusal to keep their photos (so it goes
 * on being honoured).
 */
export async function forgetFarmer(records: Records, owner: string): Promise<Forgotten> {
  const results = await records.store.listFor(owner);
  const ids = results.map((stored) => stored.result.request_id);
  await records.photos.delete(ids);
  let examples = await records.examples.deleteOwner(owner);
  // Examples kept before they were indexed by farmer are found by the result they came from.
  for (const id of ids) if (await records.examples.delete(id)) examples++;
  for (const id of ids) await records.reviews.remove(id);
  await records.sent.clear(owner);
  await records.consent.forgetInformed(owner);
  await records.store.forgetOwner(owner, results);
  return { results: results.length, examples };
}

/**
 * A farmer's deletion is asked twice: the first ask is remembered for FORGET_CONFIRM_SECONDS, and only a second
 * within it deletes (one stray keypress must not erase a farmer's history).
 */
export interface ForgetRequests {
  ask(owner: string): Promise<void>;
  /** Whether the owner asked within the time. */
  asked(owner: string): Promise<boolean>;
  /** The deletion asked for is done: the next "0" asks again. */
  done(owner: string): Promise<void>;
}

export function createForgetRequests(
  redis: Redis | undefined,
  options: { prefix?: string } = {},
): ForgetRequests {
  if (redis) {
    const key = (owner: string) => `${options.prefix ?? "cd:"}forget-asked:${owner}`;
    return {
      async ask(owner) {
        await redis.set(key(owner), "1", "EX", FORGET_CONFIRM_SECONDS);
      },
      asked: async (owner) => (await redis.exists(key(owner))) === 1,
      async done(owner) {
        await redis.del(key(owner));
      },
    };
  }
  const asked = new Map<string, number>();
  return {
    async ask(owner) {
      asked.set(owner, Date.now() + FORGET_CONFIRM_SECONDS * 1000);
    },
    asked: async (owner) => (asked.get(owner) ?? 0) > Date.now(),
    async done(owner) {
      asked.delete(owner);
    },
  };
}
