import type { FastifyReply, FastifyRequest } from "fastify";
import type { Redis } from "ioredis";
import { REDELIVERY_SECONDS, WEBHOOK_REDIS_BUDGET_MS } from "../../src/limits.js";

/** Redis, and so the queue, the results and the language memory, cannot be reached right now. */
export class ChannelsUnavailableError extends Error {
  override name = "ChannelsUnavailableError";
}

/** Runs work that needs Redis, or fails fast: at once when Redis is not connected, else after the budget. */
export type RedisGate = <T>(work: () => Promise<T>) => Promise<T>;

/**
 * ioredis queues commands while it reconnects and fails them only after about 20 attempts (a minute or more):
 * far past what a provider waits for a webhook. A webhook's Redis work goes through this gate, so with Redis
 * down it answers within a second. Work cut off by the budget may still complete later; every webhook's job
 * id is the provider's message id, so a job that lands then and again on the provider's retry runs once.
 */
export function createRedisGate(redis: Redis, budgetMs = WEBHOOK_REDIS_BUDGET_MS): RedisGate {
  return async (work) => {
    if (redis.status !== "ready") throw new ChannelsUnavailableError(`Redis is ${redis.status}`);
    const running = work();
    running.catch(() => {});
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new ChannelsUnavailableError(`Redis did not answer within ${budgetMs} ms`)),
        budgetMs,
      );
    });
    try {
      return await Promise.race([running, late]);
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * The answer for a provider that delivers again after a 5xx (Telegram always, Twilio with connection
 * overrides): 503 with Retry-After, and one log line naming the provider and why.
 */
export function deferDelivery(
  request: FastifyRequest,
  reply: FastifyReply,
  provider: string,
  error: ChannelsUnavailableError,
): FastifyReply {
  request.log.warn(
    { provider, reason: error.message },
    "webhook answered 503: Redis is unavailable, the provider will deliver it again",
  );
  return reply
    .code(503)
    .header("Retry-After", REDELIVERY_SECONDS)
    .send({ detail: "Temporarily unavailable: deliver this webhook again later", request_id: request.id });
}

/**
 * A webhook's message queued and the webhook acknowledged; with Redis unavailable, 503 (deferDelivery), for a
 * provider that delivers it again (Telegram always, Twilio with connection overrides).
 */
export async function enqueueOrDefer(
  request: FastifyRequest,
  reply: FastifyReply,
  provider: string,
  enqueue: () => Promise<void>,
  acknowledge: (reply: FastifyReply) => FastifyReply,
): Promise<FastifyReply> {
  try {
    await enqueue();
  } catch (error) {
    if (error instanceof ChannelsUnavailableError) return deferDelivery(request, reply, provider, error);
    throw error;
  }
  return acknowledge(reply);
}
