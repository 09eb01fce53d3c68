import { Redis } from "ioredis";
import type { Logger } from "pino";
import { errorChain } from "./logger.js";

/**
 * A log for an error that repeats while a dependency is down (ioredis reports every reconnect attempt,
 * BullMQ re-emits them): the first of a kind at `warn`, the same again within a minute at `debug`, so an
 * outage is one line per minute and not one per retry, and every line is pino JSON, never a stack dump.
 */
export function repeatingErrorLog(logger: Logger, msg: string, context: object = {}) {
  let last = "";
  let loggedAt = 0;
  return (error: unknown): void => {
    const chain = errorChain(error);
    const now = Date.now();
    const repeat = chain === last && now - loggedAt < 60_000;
    if (repeat) {
      logger.debug({ ...context, err: chain }, msg);
      return;
    }
    last = chain;
    loggedAt = now;
    logger.warn({ ...context, err: chain }, msg);
  };
}

/**
 * The process's Redis client. `blocking`: BullMQ workers need commands that retry forever rather than fail
 * mid-wait. Connection problems are logged as JSON (see repeatingErrorLog), and the return of the
 * connection once.
 */
export function createRedis(
  url: string,
  logger: Logger,
  options: { name: string; blocking?: boolean },
): Redis {
  const redis = new Redis(url, {
    connectionName: options.name,
    ...(options.blocking ? { maxRetriesPerRequest: null } : {}),
  });
  const problem = repeatingErrorLog(logger, "redis unavailable, reconnecting", { redis: options.name });
  let down = false;
  redis.on("error", (error) => {
    down = true;
    problem(error);
  });
  // A connection lost and back before a reconnect attempt fails raises no error: an outage all the same.
  redis.on("close", () => {
    down = true;
  });
  redis.on("ready", () => {
    if (down) logger.info({ redis: options.name }, "redis connection restored");
    down = false;
  });
  return redis;
}

/** Resolves true once Redis is ready, false after `ms`: never rejects, whatever the connection does. */
export function untilReady(redis: Redis, ms: number): Promise<boolean> {
  if (redis.status === "ready") return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      redis.off("ready", onReady);
      resolve(false);
    }, ms);
    timer.unref();
    const onReady = () => {
      clearTimeout(timer);
      resolve(true);
    };
    redis.once("ready", onReady);
  });
}
