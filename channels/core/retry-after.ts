import { DEFAULT_RETRY_AFTER_MS, MAX_RETRY_AFTER_MS } from "../limits.js";

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
