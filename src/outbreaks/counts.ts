import type { Redis } from "ioredis";
import { OUTBREAK_TTL_SECONDS } from "../limits.js";

/** Diagnoses counted per ISO week, region and disease class. */
export interface OutbreakCounts {
  add(week: string, region: string, classId: string, delta: number): Promise<void>;
  /**
   * Moves a diagnosis from one class's count to another's (either may be absent), both or neither, and once
   * per `once` however often it is called: a follow-up run again after a failure moves nothing twice.
   */
  moveOnce(week: string, region: string, move: { from?: string; to?: string }, once: string): Promise<void>;
  /** For each week asked, its counts keyed `region\tclassId`. */
  read(weeks: string[]): Promise<Map<string, Map<string, number>>>;
}

export const countKey = (region: string, classId: string) => `${region}\t${classId}`;

// The marker and the two counts in one step: a move is never half made, nor made twice.
const MOVE_ONCE = `if not redis.call('set', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then return 0 end
if ARGV[2] ~= '' then redis.call('hincrby', KEYS[2], ARGV[2], -1) end
if ARGV[3] ~= '' then redis.call('hincrby', KEYS[2], ARGV[3], 1) end
redis.call('expire', KEYS[2], ARGV[1])
return 1`;

export function createOutbreakCounts(
  redis: Redis | undefined,
  options: { prefix?: string } = {},
): OutbreakCounts {
  const prefix = options.prefix ?? "cd:";
  if (redis) {
    const key = (week: string) => `${prefix}outbreak:${week}`;
    return {
      async moveOnce(week, region, { from, to }, once) {
        await redis.eval(
          MOVE_ONCE,
          2,
          `${prefix}outbreak:moved:${once}`,
          key(week),
          OUTBREAK_TTL_SECONDS,
          from ? countKey(region, from) : "",
          to ? countKey(region, to) : "",
        );
      },
      async add(week, region, classId, delta) {
        await redis
          .multi()
          .hincrby(key(week), countKey(region, classId), delta)
          .expire(key(week), OUTBREAK_TTL_SECONDS)
          .exec();
      },
      async read(weeks) {
        const rows = await Promise.all(weeks.map((w) => redis.hgetall(key(w))));
        return new Map(
          weeks.map((w, i) => [
            w,
            new Map(
              Object.entries(rows[i] ?? {})
                .map(([k, v]) => [k, Number(v)] as const)
                .filter(([, n]) => n > 0),
            ),
          ]),
        );
      },
    };
  }
  const weeksMap = new Map<string, Map<string, number>>();
  const moved = new Set<string>();
  const add: OutbreakCounts["add"] = async (week, region, classId, delta) => {
    const counts = weeksMap.get(week) ?? new Map<string, number>();
    const key = countKey(region, classId);
    counts.set(key, (counts.get(key) ?? 0) + delta);
    weeksMap.set(week, counts);
  };
  return {
    add,
    async moveOnce(week, region, { from, to }, once) {
      if (moved.has(once)) return;
      moved.add(once);
      if (from) await add(week, region, from, -1);
      if (to) await add(week, region, to, 1);
    },
    async read(weeks) {
      return new Map(
        weeks.map((w) => [
          w,
          new Map([...(weeksMap.get(w) ?? new Map<string, number>())].filter(([, n]) => n > 0)),
        ]),
      );
    },
  };
}
