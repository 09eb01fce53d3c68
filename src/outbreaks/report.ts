import { SURGE_BASELINE_WEEKS, SURGE_FACTOR, SURGE_MIN_COUNT } from "../limits.js";
import type { OutbreakCounts } from "./counts.js";
import { lastWeeks } from "./weeks.js";

export interface OutbreakRow {
  region: string;
  disease: string;
  /** One count per week, oldest first; the last is this week. */
  counts: number[];
  thisWeek: number;
  /** Mean of the SURGE_BASELINE_WEEKS weeks before this one. */
  baseline: number;
  surge: boolean;
}

export interface OutbreakReport {
  weeks: { week: string; start: Date }[];
  rows: OutbreakRow[];
  regions: string[];
  /** Per disease, summed over the regions shown: the chart's lines. */
  series: { disease: string; counts: number[] }[];
}

/** This week well above its recent past: at least SURGE_FACTOR × the mean of the weeks before, and at least SURGE_MIN_COUNT. */
export function isSurge(thisWeek: number, baseline: number): boolean {
  return thisWeek >= SURGE_MIN_COUNT && thisWeek >= SURGE_FACTOR * baseline;
}

function surgeOf(counts: number[]) {
  const thisWeek = counts.at(-1) ?? 0;
  const before = counts.slice(-1 - SURGE_BASELINE_WEEKS, -1);
  const baseline = before.length ? before.reduce((a, b) => a + b, 0) / SURGE_BASELINE_WEEKS : 0;
  return { thisWeek, baseline, surge: isSurge(thisWeek, baseline) };
}

export async function outbreakReport(
  counts: OutbreakCounts,
  { now, weeks: shown, region }: { now: Date; weeks: number; region?: string },
): Promise<OutbreakReport> {
  // The baseline needs the weeks before the first one shown.
  const span = Math.max(shown, SURGE_BASELINE_WEEKS + 1);
  const weeks = lastWeeks(now, span);
  const byWeek = await counts.read(weeks.map((w) => w.week));
  const cells = new Map<string, number[]>();
  const regions = new Set<string>();
  weeks.forEach(({ week }, i) => {
    for (const [key, n] of byWeek.get(week) ?? []) {
      const [r = "unknown"] = key.split("\t");
      regions.add(r);
      if (region && r !== region) continue;
      const row = cells.get(key) ?? new Array<number>(span).fill(0);
      row[i] = n;
      cells.set(key, row);
    }
  });
  const rows = [...cells].map(([key, all]) => {
    const [r = "unknown", disease = ""] = key.split("\t");
    return { region: r, disease, counts: all.slice(-shown), ...surgeOf(all) };
  });
  rows.sort(
    (a, b) =>
      Number(b.surge) - Number(a.surge) ||
      b.thisWeek - a.thisWeek ||
      b.counts.reduce((x, y) => x + y, 0) - a.counts.reduce((x, y) => x + y, 0),
  );
  const perDisease = new Map<string, number[]>();
  for (const row of rows) {
    const sum = perDisease.get(row.disease) ?? new Array<number>(shown).fill(0);
    row.counts.forEach((n, i) => {
      sum[i] = (sum[i] ?? 0) + n;
    });
    perDisease.set(row.disease, sum);
  }
  const series = [...perDisease]
    .map(([disease, c]) => ({ disease, counts: c }))
    .sort((a, b) => b.counts.reduce((x, y) => x + y, 0) - a.counts.reduce((x, y) => x + y, 0));
  return { weeks: weeks.slice(-shown), rows, regions: [...regions].sort(), series };
}
