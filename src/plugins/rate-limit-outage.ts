import type { FastifyBaseLogger } from "fastify";
import type { Redis } from "ioredis";
import { type IRateLimiterOptions, type RateLimiterAbstract, RateLimiterMemory } from "rate-limiter-flexible";

/**
 * While Redis is unreachable each instance limits on its own (the API stays up), so N instances allow N times
 * the limit. This ledger says so in the log when it starts, remembers what each client spent meanwhile, and
 * adds it to the shared counters in Redis as soon as Redis is back, so the window a client is in when the
 * outage ends still counts the requests it made during it.
 */
export interface OutageLedger {
  /** The in-memory limiter to insure `primary` (a Redis limiter) with; it records what it counts. */
  insurance(options: IRateLimiterOptions, primary: () => RateLimiterAbstract): RateLimiterMemory;
  /** Adds what was counted in memory to Redis; called when Redis is ready again. */
  replay(): Promise<void>;
}

interface Spent {
  primary: () => RateLimiterAbstract;
  key: string;
  points: number;
  /** When the client's in-memory window opened: a window that has closed since is not replayed. */
  since: number;
  windowMs: number;
}

export function createOutageLedger(
  redis: Redis,
  logger: FastifyBaseLogger,
  maxClients = 100_000,
): OutageLedger {
  const spent = new Map<string, Spent>();
  let inOutage = false;

  function record(
    options: IRateLimiterOptions,
    primary: () => RateLimiterAbstract,
    key: string,
    points: number,
  ) {
    if (!inOutage) {
      inOutage = true;
      logger.warn(
        { redis: redis.status },
        "rate limits are per instance while Redis is unavailable: each instance allows the full limit",
      );
      // Connected but not answering (a stall): no "ready" will say it is over, but a PING queued behind the
      // stalled commands will.
      if (redis.status === "ready")
        redis.ping().then(
          () => ledger.replay(),
          () => {},
        );
    }
    const id = `${options.keyPrefix}:${key}`;
    const entry = spent.get(id);
    if (entry) entry.points += points;
    else if (spent.size < maxClients)
      spent.set(id, { primary, key, points, since: Date.now(), windowMs: (options.duration ?? 60) * 1000 });
  }

  const ledger: OutageLedger = {
    insurance(options, primary) {
      return new (class extends RateLimiterMemory {
        override consume(key: string | number, points = 1, consumeOptions = {}) {
          record(options, primary, String(key), points);
          return super.consume(key, points, consumeOptions);
        }
      })(options);
    },
    async replay() {
      if (!inOutage) return;
      inOutage = false;
      const entries = [...spent.values()].filter((e) => Date.now() - e.since < e.windowMs);
      spent.clear();
      let requests = 0;
      try {
        for (const entry of entries) {
          await entry.primary().penalty(entry.key, entry.points);
          requests += entry.points;
        }
        logger.info(
          { clients: entries.length, requests },
          "Redis is back: requests counted per instance during the outage added to the shared rate limits",
        );
      } catch (error) {
        logger.warn({ err: error }, "Redis failed again while the outage's rate-limit counts were added");
      }
    },
  };
  redis.on("ready", () => void ledger.replay());
  return ledger;
}
