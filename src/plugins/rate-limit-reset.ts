/**
 * The window's end is only known as "milliseconds from now", measured a moment before this process reads its
 * own clock, so `ceil(now + msBeforeNext)` can step by a second within one window when the end falls near a
 * whole second. The first value announced for a window is remembered and repeated, so every response of a
 * window names the same reset.
 */
export function createResetMemo(maxEntries = 10_000) {
  const announced = new Map<string, number>();
  return {
    announce(windowKey: string, msBeforeNext: number): number {
      const now = Date.now();
      const estimate = (now + msBeforeNext) / 1000;
      const previous = announced.get(windowKey);
      if (previous !== undefined && Math.abs(previous - estimate) < 1) return previous;
      if (announced.size >= maxEntries) {
        for (const [key, reset] of announced) if (reset * 1000 <= now) announced.delete(key);
        if (announced.size >= maxEntries) announced.clear();
      }
      const reset = Math.ceil(estimate);
      announced.set(windowKey, reset);
      return reset;
    },
  };
}
