// The per-farmer chain of jobs (channels/core/turns.ts) on the real Redis: each job after the one queued
// before it, and a job put back by an operator moved to the end without leaving a job waiting for it.
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { createTurns } from "../../channels/core/turns.js";

const prefix = `test-turns-${process.pid}-${Date.now()}`;
const redis = new Redis("redis://127.0.0.1:6379", { maxRetriesPerRequest: null });
const turns = createTurns(redis, prefix);
let farmer = 0;

/** A fresh conversation with jobs a, b, c... claimed in that order. */
async function chain(...jobs: string[]) {
  const conversation = `farmer-${++farmer}`;
  const id = (job: string) => `${conversation}-${job}`;
  for (const job of jobs) await turns.claim(conversation, id(job));
  const predecessor = async (job: string) => {
    const previous = await turns.after(id(job));
    return previous ? previous.slice(conversation.length + 1) : previous;
  };
  return { conversation, id, predecessor };
}

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

describe("a farmer's chain of jobs", () => {
  it("links each job to the one queued before it, the same answer for the same job twice", async () => {
    const { conversation, id, predecessor } = await chain("a", "b", "c");
    expect([await predecessor("a"), await predecessor("b"), await predecessor("c")]).toEqual([
      undefined,
      "a",
      "b",
    ]);
    expect(await turns.claim(conversation, id("b"))).toBe(id("a"));
    expect(await turns.after("never-queued")).toBeNull();
  });

  it("moves a job put back to the end: its follower waits for its predecessor, the next job for it", async () => {
    const { conversation, id, predecessor } = await chain("a", "b", "c", "d");
    expect(await turns.requeue(conversation, id("b"))).toBe(id("d"));
    expect([
      await predecessor("a"),
      await predecessor("c"),
      await predecessor("d"),
      await predecessor("b"),
    ]).toEqual([undefined, "a", "c", "d"]);
    await turns.claim(conversation, id("e"));
    expect(await predecessor("e")).toBe("b");
    // The first job too: its follower then waits for nothing.
    expect(await turns.requeue(conversation, id("a"))).toBe(id("e"));
    expect(await predecessor("c")).toBeUndefined();
    expect(await predecessor("a")).toBe("e");
  });

  it("leaves the latest job where it is, and starts a chain whose links expired", async () => {
    const { conversation, id, predecessor } = await chain("a", "b");
    expect(await turns.requeue(conversation, id("b"))).toBe(id("a"));
    expect(await predecessor("b")).toBe("a");
    // Nothing known any more about this farmer (a day later): the job put back is the chain.
    expect(await turns.requeue("farmer-gone", "old-job")).toBeUndefined();
    expect(await turns.after("old-job")).toBeUndefined();
    await turns.claim("farmer-gone", "new-job");
    expect(await turns.after("new-job")).toBe("old-job");
  });

  it("moves a job twice without a cycle", async () => {
    const { conversation, id, predecessor } = await chain("a", "b", "c");
    await turns.requeue(conversation, id("a"));
    await turns.requeue(conversation, id("b"));
    // c, then a, then b: following the links from the end reaches the start.
    expect([await predecessor("c"), await predecessor("a"), await predecessor("b")]).toEqual([
      undefined,
      "c",
      "a",
    ]);
  });
});

describe("a completed job", () => {
  it("is known as finished after the queue has removed it; a job never finished is not", async () => {
    const { id } = await chain("a", "b");
    expect(await turns.finished(id("a"))).toBe(false);
    await turns.finish(id("a"));
    expect(await turns.finished(id("a"))).toBe(true);
    expect(await turns.finished(id("b"))).toBe(false);
    expect(await redis.ttl(`${prefix}:turn:done:${id("a")}`)).toBeGreaterThan(0);
  });
});
