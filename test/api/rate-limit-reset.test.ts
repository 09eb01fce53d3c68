import { afterEach, describe, expect, it, vi } from "vitest";
import { createResetMemo } from "../../src/plugins/rate-limit-reset.js";

describe("X-RateLimit-Reset of one window", () => {
  afterEach(() => vi.restoreAllMocks());

  it("stays the same when the window's end lies just before a whole second", () => {
    const memo = createResetMemo();
    const end = 1_800_000_060_000 - 1;
    const clock = vi.spyOn(Date, "now");
    clock.mockReturnValue(end - 60_000);
    const first = memo.announce("diagnosis:30:ip:a", 60_000);
    expect(first).toBe(1_800_000_060);
    // A later response reads the clock 2 ms after the limiter measured 30 s left: the naive estimate
    // crosses into the next second.
    clock.mockReturnValue(end - 30_000 + 2);
    expect(Math.ceil((end - 30_000 + 2 + 30_000) / 1000)).toBe(first + 1);
    expect(memo.announce("diagnosis:30:ip:a", 30_000)).toBe(first);
  });

  it("moves on with the next window and keeps clients apart", () => {
    const memo = createResetMemo();
    const clock = vi.spyOn(Date, "now").mockReturnValue(1_800_000_000_500);
    const first = memo.announce("k:a", 60_000);
    expect(memo.announce("k:b", 10_000)).toBe(Math.ceil((1_800_000_000_500 + 10_000) / 1000));
    clock.mockReturnValue(1_800_000_060_600);
    expect(memo.announce("k:a", 60_000)).toBe(first + 60);
  });

  it("forgets ended windows when it is full", () => {
    const memo = createResetMemo(2);
    const clock = vi.spyOn(Date, "now").mockReturnValue(1_800_000_000_000);
    memo.announce("a", 1_000);
    memo.announce("b", 1_000);
    clock.mockReturnValue(1_800_000_005_000);
    expect(memo.announce("c", 60_000)).toBe(1_800_000_065);
    expect(memo.announce("a", 60_000)).toBe(1_800_000_065);
  });
});
