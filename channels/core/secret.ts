import { createHash, timingSafeEqual } from "node:crypto";

/** Constant-time comparison of two secrets of any length (hashing first evens out the lengths). */
export function sameSecret(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();
  return timingSafeEqual(digest(given), digest(expected));
}
