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
 * with their photos and codes (the review queue drops cases whose result is gone), the messages sent to them,
 * and the labelled examples made from their photos. What stays: the outbreak counts (per disease, region and
 * week, naming nobody) and a refusal to keep their photos (so it goes on being honoured).
 */
export async function forgetFarmer(records: Records, owner: string): Promise<Forgotten> {
  const ids = await records.store.forgetOwner(owner);
  await records.photos.delete(ids);
  await records.sent.clear(owner);
  const examples = await records.examples.deleteOwner(owner);
  return { results: ids.length, examples };
}

/**
 * A farmer's deletion is asked twice: the first ask is remembered for FORGET_CONFIRM_SECONDS, and only a second
 * within it deletes (one stray keypress must not erase a farmer's history).
 */
export interface ForgetRequests {
  ask(owner: string): Promise<void>;
  /** True when the owner asked within the time: the ask is used up. */
  confirm(owner: string): Promise<boolean>;
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
      confirm: async (owner) => (await redis.getdel(key(owner))) !== null,
    };
  }
  const asked = new Map<string, number>();
  return {
    async ask(owner) {
      asked.set(owner, Date.now() + FORGET_CONFIRM_SECONDS * 1000);
    },
    async confirm(owner) {
      const until = asked.get(owner);
      asked.delete(owner);
      return until !== undefined && until > Date.now();
    },
  };
}
