import type { Redis } from "ioredis";
import { RESULT_TTL_SECONDS, SENT_LOG_ENTRIES } from "../limits.js";

/** One message to a farmer, as the console's look-up shows it. */
export interface SentMessage {
  at: string;
  channel: string;
  text: string;
  ok: boolean;
  /** Why the provider refused it, when it did. */
  error?: string;
  /** Not sent yet: outside the channel's reply window, it waits for the farmer's next message. */
  held?: boolean;
}

export interface SentLog {
  add(owner: string, message: SentMessage): Promise<void>;
  /** Newest first. */
  list(owner: string): Promise<SentMessage[]>;
  clear(owner: string): Promise<void>;
}

export function createSentLog(redis: Redis | undefined, options: { prefix?: string } = {}): SentLog {
  if (redis) {
    const key = (owner: string) => `${options.prefix ?? "cd:"}sent:${owner}`;
    return {
      async add(owner, message) {
        await redis
          .multi()
          .lpush(key(owner), JSON.stringify(message))
          .ltrim(key(owner), 0, SENT_LOG_ENTRIES - 1)
          .expire(key(owner), RESULT_TTL_SECONDS)
          .exec();
      },
      list: async (owner) =>
        (await redis.lrange(key(owner), 0, -1)).map((raw) => JSON.parse(raw) as SentMessage),
      async clear(owner) {
        await redis.del(key(owner));
      },
    };
  }
  const logs = new Map<string, SentMessage[]>();
  return {
    async add(owner, message) {
      logs.set(owner, [message, ...(logs.get(owner) ?? [])].slice(0, SENT_LOG_ENTRIES));
    },
    list: async (owner) => logs.get(owner) ?? [],
    async clear(owner) {
      logs.delete(owner);
    },
  };
}
