import type { FastifyBaseLogger } from "fastify";
import type { Redis } from "ioredis";
import { OUTBOX_MAX_MESSAGES, OUTBOX_RETRY_MS } from "../../src/limits.js";
import type { InboundMessage } from "./types.js";

/**
 * Messages from a provider that does not deliver a webhook again (Africa's Talking's SMS callbacks), kept in
 * this process while Redis cannot take them and queued as soon as it can: when the connection is ready again,
 * and every OUTBOX_RETRY_MS meanwhile (a Redis that was only slow, or refused a write, never reconnects).
 * Bounded: past `max` messages the provider is answered with an error instead. What a crash of this process
 * loses during an outage is logged as kept, one line per message.
 */
export interface Outbox {
  /** False when the outbox is full. `reason`: why Redis did not take it, for the log. */
  keep(message: InboundMessage, reason: string): boolean;
  readonly size: number;
}

export function createOutbox(options: {
  redis: Redis;
  enqueue: (message: InboundMessage) => Promise<void>;
  logger: FastifyBaseLogger;
  max?: number;
}): Outbox {
  const { redis, enqueue, logger, max = OUTBOX_MAX_MESSAGES } = options;
  const kept: InboundMessage[] = [];
  let flushing = false;
  let retry: NodeJS.Timeout | undefined;

  function flushLater() {
    // "end": the connection was closed for good (the process is stopping): nothing more will take them.
    if (retry || kept.length === 0 || redis.status === "end") return;
    retry = setTimeout(() => {
      retry = undefined;
      void flush();
    }, OUTBOX_RETRY_MS);
    retry.unref();
  }

  async function flush() {
    if (flushing) return;
    flushing = true;
    let queued = 0;
    try {
      while (kept.length > 0 && redis.status === "ready") {
        const message = kept.shift()!;
        try {
          await enqueue(message);
        } catch (error) {
          // Back at the end of the line: one message Redis keeps refusing does not hold up the others.
          kept.push(message);
          throw error;
        }
        queued++;
      }
    } catch (error) {
      logger.warn({ err: error, waiting: kept.length }, "outbox: Redis failed again; the rest waits");
    } finally {
      flushing = false;
      if (queued > 0)
        logger.info({ queued, waiting: kept.length }, "outbox: messages kept during the outage queued");
      flushLater();
    }
  }
  redis.on("ready", () => void flush());

  return {
    keep(message, reason) {
      if (kept.length >= max) return false;
      kept.push(message);
      logger.warn(
        { provider: message.provider, messageId: message.messageId, waiting: kept.length, reason },
        "outbox: Redis did not take the message, kept in memory until it does",
      );
      flushLater();
      return true;
    },
    get size() {
      return kept.length;
    },
  };
}
