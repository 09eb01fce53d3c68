/** ISO 8601 week of a date, as "2026-W48" (weeks start on Monday; week 1 holds the year's first Thursday). */
export function isoWeek(date: Date): string {
  const day = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()));
  const weekday = day.getUTCDay() || 7;
  day.setUTCDate(day.getUTCDate() + 4 - weekday);
  const yearStart = Date.UTC(day.getUTCFullYear(), 0, 1);
  const week = Math.ceil(((day.getTime() - yearStart) / 86_400_000 + 1) / 7);
  return `${day.getUTCFullYear()}-W${String(week).padStart(2, "0")}`;
}

/** The Monday (UTC) that starts a date's ISO week. */
export function weekStart(date: Date): Date {
  const day = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()));
  day.setUTCDate(day.getUTCDate() - ((day.getUTCDay() || 7) - 1));
  return day;
}

/** The `count` ISO weeks up to and including the one of `now`, oldest first, with their Mondays. */
export function lastWeeks(now: Date, count: number): { week: string; start: Date }[] {
  const monday = weekStart(now);
  return Array.from({ length: count }, (_, i) => {
    const start = new Date(monday.getTime() - (count - 1 - i) * 7 * 86_400_000);
    return { week: isoWeek(start), start };
  });
}
