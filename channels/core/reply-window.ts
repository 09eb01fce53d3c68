import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { Language } from "../../src/diagnosis/types.js";
import { errorChain } from "../../src/logger.js";
import type { SentLog } from "../../src/results/sent-log.js";
import { HELD_REPLY_TTL_S, REPLY_WINDOW_MARGIN_MS } from "../limits.js";
import type { Target } from "./conversation.js";
import { logEntry } from "./sent-log.js";
import { type Adapter, PermanentJobError, type Reply } from "./types.js";

/**
 * Where a channel delivers free-form messages only for a while after the farmer's last one (WhatsApp's 24
 * hours), a reply outside that window would be accepted by the provider and then dropped. It is kept
 * instead, the farmer is asked to write (where the provider has a way to, a template), and it goes out first
 * when they next write. An officer's answer a day after the photo, or a partner's result routed to a number
 * that never wrote, is then late, not lost.
 */
export interface ReplyWindows {
  /** The farmer wrote on this address at `at` (ms since the epoch): free-form replies may go for `windowMs`. */
  open(target: Target, windowMs: number, at: number): Promise<void>;
  isOpen(target: Target): Promise<boolean>;
  /** Keeps a reply for the farmer's next message. */
  hold(reply: Reply): Promise<void>;
  /** How many replies are kept for this address. */
  count(target: Target): Promise<number>;
  /** The oldest reply kept for this address, left in place until `drop` (a failed send keeps it). */
  first(target: Target): Promise<Reply | undefined>;
  drop(target: Target): Promise<void>;
  /** True once per wait: whoever gets it asks the farmer to write (`resetNotice` hands it back). */
  claimNotice(target: Target): Promise<boolean>;
  /** The notice failed, or the wait is over: the next reply kept asks again. */
  resetNotice(target: Target): Promise<void>;
  /** Drops what is kept for the farmer on every channel (they asked for their data to be deleted). */
  forgetOwner(owner: string): Promise<void>;
}

export interface ReplyWindowsDeps {
  redis: Redis;
  prefix: string;
  /** The farmer key of an address (registry.farmerKeys): a provider may spell one address several ways. */
  farmerKey(provider: string, address: string): string;
}

export function createReplyWindows({ redis, prefix, farmerKey }: ReplyWindowsDeps): ReplyWindows {
  // Per channel: a farmer's WhatsApp window says nothing about their SMS.
  const address = (t: Target) => `${t.provider}:${t.channel}:${farmerKey(t.provider, t.to)}`;
  const windowKey = (t: Target) => `${prefix}window:${address(t)}`;
  const heldKey = (t: Target) => `${prefix}held:${address(t)}`;
  const noticeKey = (t: Target) => `${prefix}held-notice:${address(t)}`;
  return {
    async open(target, windowMs, at) {
      // The key lives as long as the window: no clock to compare with when a reply is sent. A message read
      // late (a job retried) never shortens a window a later message opened: the expiry only moves later.
      const left = Math.round(at + windowMs - REPLY_WINDOW_MARGIN_MS - Date.now());
      if (left <= 0) return;
      await redis
        .multi()
        .set(windowKey(target), String(at), "PX", left, "NX")
        .pexpire(windowKey(target), left, "GT")
        .exec();
    },
    isOpen: async (target) => (await redis.exists(windowKey(target))) === 1,
    async hold(reply) {
      await redis
        .multi()
        .rpush(heldKey(reply), JSON.stringify(reply))
        .expire(heldKey(reply), HELD_REPLY_TTL_S)
        .exec();
    },
    count: (target) => redis.llen(heldKey(target)),
    async first(target) {
      const raw = await redis.lindex(heldKey(target), 0);
      return raw === null ? undefined : (JSON.parse(raw) as Reply);
    },
    async drop(target) {
      await redis.lpop(heldKey(target));
    },
    claimNotice: async (target) =>
      (await redis.set(noticeKey(target), "1", "EX", HELD_REPLY_TTL_S, "NX")) === "OK",
    async resetNotice(target) {
      await redis.del(noticeKey(target));
    },
    async forgetOwner(owner) {
      // The farmer's keys on any provider and channel: found by pattern (a rare request, a bounded scan).
      for (const kind of ["held", "held-notice"]) {
        const pattern = `${prefix}${kind}:*:*:${owner.replace(/[*?[\]\\]/g, "\\$&")}`;
        for await (const keys of redis.scanStream({ match: pattern, count: 500 }))
          if ((keys as string[]).length) await redis.del(...(keys as string[]));
      }
    },
  };
}

export interface WindowedSendsDeps {
  windows: ReplyWindows;
  log: SentLog;
  farmerKey(provider: string, address: string): string;
  /** The farmer's language: the notice's template is the one approved in it. */
  languageOf(owner: string): Promise<Language>;
  logger: Logger;
}

/**
 * The adapters, each send on a channel with a reply window kept for the farmer's next message when the window
 * is closed: written to their delivery log as waiting, and the farmer asked to write by the provider's
 * notice (sent once per wait, with the first reply kept).
 */
export function windowedSends(
  adapters: ReadonlyMap<string, Adapter>,
  { windows, log, farmerKey, languageOf, logger }: WindowedSendsDeps,
): Map<string, Adapter> {
  const wrap = (adapter: Adapter): Adapter => ({
    ...adapter,
    async send(reply) {
      const capabilities = adapter.capabilities(reply.channel);
      if (!capabilities.replyWindowMs || (await windows.isOpen(reply))) return adapter.send(reply);
      await windows.hold(reply);
      const owner = farmerKey(reply.provider, reply.to);
      await log
        .add(owner, { ...logEntry(reply, capabilities), ok: false, held: true })
        .catch(() => undefined);
      if (!(await windows.claimNotice(reply))) return;
      // The reply is kept whatever happens to the notice; one that fails is asked again with the next reply kept.
      try {
        if (!(await adapter.sendWindowNotice?.(reply, await languageOf(owner))))
          logger.warn(
            { provider: reply.provider, channel: reply.channel },
            "reply kept until the farmer writes: outside the reply window, and no notice is configured",
          );
      } catch (error) {
        await windows.resetNotice(reply);
        // errorChain: an SDK's error object can carry the request's Authorization header.
        logger.error(
          { provider: reply.provider, channel: reply.channel, err: errorChain(error) },
          "window notice failed",
        );
      }
    },
  });
  return new Map([...adapters].map(([id, adapter]) => [id, wrap(adapter)]));
}

/**
 * The farmer wrote: the window opens again and what was kept for them goes out, oldest first. Returns how
 * many went out. A send that fails keeps its reply and the rest for the job's next try, but one the provider
 * refuses for good (a number that opted out) is dropped and logged, or it would stop every later message of
 * the farmer here. Only the replies kept when it starts are tried: one kept again meanwhile (the window
 * closing in between) waits for the next message.
 */
export async function deliverHeld(
  target: Target,
  adapter: Adapter,
  windows: ReplyWindows,
  receivedAt: string,
  logger: Logger,
): Promise<number> {
  const windowMs = adapter.capabilities(target.channel).replyWindowMs;
  if (!windowMs) return 0;
  await windows.open(target, windowMs, Date.parse(receivedAt));
  // A message read after its own window closed (a job retried for a day) opens nothing: kept replies stay.
  if (!(await windows.isOpen(target))) return 0;
  let sent = 0;
  for (let left = await windows.count(target); left > 0; left--) {
    const reply = await windows.first(target);
    if (!reply) break;
    try {
      await adapter.send(reply);
      sent++;
    } catch (error) {
      if (!(error instanceof PermanentJobError)) throw error;
      logger.error(
        { provider: target.provider, channel: target.channel, err: errorChain(error) },
        "kept reply refused for good: dropped",
      );
    }
    await windows.drop(target);
  }
  await windows.resetNotice(target);
  return sent;
}
