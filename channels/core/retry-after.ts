/** When a provider names no wait, or a wait we cannot read: long enough for a per-second limit to reset. */
export const DEFAULT_RETRY_AFTER_MS = 1_000;

/**
 * One queue carries every provider's jobs, so a pause asked by one holds the others' farmers too. A wait
 * capped here that proves too short only earns another 429 and another pause.
 */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * The wait a provider asks for: an HTTP Retry-After header (delay-seconds or an HTTP-date, RFC 9110 §10.2.3)
 * or a number of seconds from a response body (Telegram's `parameters.retry_after`), in milliseconds.
 */
export function retryAfterMs(value: string | number | null | undefined, now = Date.now()): number {
  let ms: number | undefined;
  if (typeof value === "number") ms = value * 1000;
  else if (value && /^\s*\d+\s*$/.test(value)) ms = Number(value) * 1000;
  else if (value) {
    const at = Date.parse(value);
    if (!Number.isNaN(at)) ms = at - now;
  }
  if (ms === undefined || !Number.isFinite(ms) || ms <= 0) return DEFAULT_RETRY_AFTER_MS;
  return Math.min(Math.ceil(ms), MAX_RETRY_AFTER_MS);
}
