import type { Redis } from "ioredis";
import { OUTBREAK_TTL_SECONDS } from "../limits.js";

/** Diagnoses counted per ISO week, region and disease class. */
export interface OutbreakCounts {
  add(week: string, region: string, classId: string, delta: number): Promise<void>;
  /** For each week asked, its counts keyed `region\tclassId`. */
  read(weeks: string[]): Promise<Map<string, Map<string, number>>>;
}

export const countKey = (region: string, classId: string) => `${region}\t${classId}`;

export function createOutbreakCounts(
  redis: Redis | undefined,
  options: { prefix?: string } = {},
): OutbreakCounts {
  const prefix = options.prefix ?? "cd:";
  if (redis) {
    const key = (week: string) => `${prefix}outbreak:${week}`;
    return {
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
  return {
    async add(week, region, classId, delta) {
      const counts = weeksMap.get(week) ?? new Map<string, number>();
      const key = countKey(region, classId);
      counts.set(key, (counts.get(key) ?? 0) + delta);
      weeksMap.set(week, counts);
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
