import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import type { Redis } from "ioredis";
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  RLWrapperTimeouts,
} from "rate-limiter-flexible";
import { RATE_LIMIT_REDIS_WAIT_MS } from "../limits.js";
import { createOutageLedger } from "./rate-limit-outage.js";
import { createResetMemo } from "./rate-limit-reset.js";

/**
 * Which budget a route draws on. `other` covers /docs, /redoc, /openapi.json, their assets and unknown
 * paths: a page of Swagger UI costs about eight requests, so its default (300/min) allows ~35 page views
 * a minute per IP while still capping scrapers. Routes that verify their callers themselves (provider
 * webhooks) may opt out with `false`.
 */
export type RateLimitBucket = "diagnosis" | "health" | "other";

declare module "fastify" {
  interface FastifyContextConfig {
    rateLimit?: RateLimitBucket | false;
  }
  interface FastifyInstance {
    /** The onRequest limiter, for requests that end before any hook runs; answers 429 itself when exceeded. */
    enforceRateLimit(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  }
}

export interface RateLimitOptions {
  limits: Record<RateLimitBucket, number>;
  /** Shared counters: two instances on one Redis enforce one limit. Without it, counters are per process. */
  redis?: Redis;
  /** Namespace of the Redis keys (tests use a unique one per run). */
  keyPrefix: string;
}

const WINDOW_SECONDS = 60;

/**
 * Spec section 8: a fixed one-minute window per client (the IP, or the API key for key holders), and the
 * X-RateLimit-* headers on every response, 429s and errors included, because they are set here, first.
 */
const rateLimit: FastifyPluginAsync<RateLimitOptions> = async (app, opts) => {
  const limiters = new Map<string, RateLimiterAbstract>();
  const resets = createResetMemo();
  const outage = opts.redis ? createOutageLedger(opts.redis, app.log) : undefined;

  // rate-limiter-flexible's windows are fixed: the first request opens a 60 s window and the counter
  // expires with it. One limiter per (bucket, limit): API keys carry their own limits.
  function limiterFor(bucket: RateLimitBucket, points: number): RateLimiterAbstract {
    const id = `${bucket}:${points}`;
    let limiter = limiters.get(id);
    if (!limiter) {
      const common = { points, duration: WINDOW_SECONDS, keyPrefix: `${opts.keyPrefix}:${bucket}` };
      const shared: RateLimiterAbstract | undefined =
        opts.redis && outage
          ? new RateLimiterRedis({
              ...common,
              storeClient: opts.redis,
              // While Redis is away each instance limits on its own rather than failing or waiting, and the
              // ledger hands what it counted to Redis when it is back.
              rejectIfRedisNotReady: true,
              insuranceLimiter: outage.insurance(common, () => shared!),
            })
          : undefined;
      // A Redis that keeps the connection but stops answering raises no error: past the wait, the request is
      // counted by the same per-instance insurance (the wrapper takes the Redis limiter's).
      limiter = shared
        ? new RLWrapperTimeouts({ limiter: shared, timeoutMs: RATE_LIMIT_REDIS_WAIT_MS })
        : new RateLimiterMemory(common);
      limiters.set(id, limiter);
    }
    return limiter;
  }

  /** Charges the request to its budget and sets the headers; past the limit, answers 429 itself. */
  async function enforce(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const bucket = request.routeOptions.config.rateLimit ?? "other";
    if (bucket === false) return;
    const client = request.apiClient;
    // A key's limit is its diagnosis budget; it never lowers the default budgets of the other routes.
    const limit = client
      ? bucket === "diagnosis"
        ? client.perMinute
        : Math.max(opts.limits[bucket], client.perMinute)
      : opts.limits[bucket];
    const key = client ? `key:${client.name}` : `ip:${request.ip}`;

    let res: RateLimiterRes;
    let exceeded = false;
    try {
      res = await limiterFor(bucket, limit).consume(key);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      res = rejection;
      exceeded = true;
    }
    setHeaders(reply, limit, res, resets.announce(`${bucket}:${limit}:${key}`, res.msBeforeNext));
    if (!exceeded) return;
    const retryAfter = Math.max(1, Math.ceil(res.msBeforeNext / 1000));
    request.log.info({ bucket, client: client?.name ?? "ip" }, "rate limit exceeded");
    await reply
      .code(429)
      .header("Retry-After", retryAfter)
      .send({
        detail: `Rate limit exceeded: ${limit} requests per minute. Retry in ${retryAfter} seconds.`,
        request_id: request.id,
      });
  }

  // Requests that fail before routing (a malformed URL) never reach the hooks: app.ts calls this for them.
  app.decorate("enforceRateLimit", enforce);
  app.addHook("onRequest", enforce);
};

function setHeaders(reply: FastifyReply, limit: number, res: RateLimiterRes, reset: number): void {
  reply.header("X-RateLimit-Limit", limit);
  reply.header("X-RateLimit-Remaining", Math.max(0, res.remainingPoints));
  reply.header("X-RateLimit-Reset", reset);
}

export default fp(rateLimit, { name: "rate-limit", fastify: "5.x", dependencies: ["api-key"] });
