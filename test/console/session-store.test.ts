// Sessions of visitors who are not signed in (the sign-in form's CSRF secret) must not crowd out staff
// sessions: opening the sign-in page many times neither signs staff out nor keeps keys for a working day.
import { randomUUID } from "node:crypto";
import type { SessionStore } from "@fastify/session";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { createSessionStore } from "../../src/console/session-store.js";
import { ANONYMOUS_SESSION_SECONDS, SESSION_IDLE_SECONDS } from "../../src/limits.js";

type Session = Parameters<SessionStore["set"]>[1];
const redis = new Redis("redis://127.0.0.1:6379");
const prefix = `test-sessions-${randomUUID()}:`;
afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

const set = (store: SessionStore, id: string, session: object) =>
  new Promise<void>((resolve, reject) =>
    store.set(id, session as Session, (e) => (e ? reject(e) : resolve())),
  );
const get = (store: SessionStore, id: string) =>
  new Promise<Session | null | undefined>((resolve, reject) =>
    store.get(id, (e, session) => (e ? reject(e) : resolve(session))),
  );
const visitor = { _csrf: "secret-of-the-sign-in-form" };
const officer = { _csrf: "s", staff: "amina", staffVersion: 1 };

describe("sessions in memory (no Redis)", () => {
  it("keep a signed-in officer however many visitors open the sign-in page", async () => {
    const store = createSessionStore(undefined, "cd:", 3);
    await set(store, "officer", officer);
    for (let i = 0; i < 50; i++) await set(store, `visitor-${i}`, visitor);
    expect(await get(store, "officer")).toMatchObject({ staff: "amina" });
    expect(await get(store, "visitor-49")).toMatchObject(visitor);
    expect(await get(store, "visitor-0")).toBeNull();
  });

  it("move a session to the staff side when its visitor signs in", async () => {
    const store = createSessionStore(undefined, "cd:", 3);
    await set(store, "s", visitor);
    await set(store, "s", officer);
    for (let i = 0; i < 10; i++) await set(store, `visitor-${i}`, visitor);
    expect(await get(store, "s")).toMatchObject({ staff: "amina" });
  });
});

describe("sessions in Redis", () => {
  it("last an hour before sign-in and the working day after", async () => {
    const store = createSessionStore(redis, prefix);
    await set(store, "v", visitor);
    await set(store, "o", officer);
    const ttl = (id: string) => redis.ttl(`${prefix}session:${id}`);
    expect(await ttl("v")).toBeGreaterThan(ANONYMOUS_SESSION_SECONDS - 5);
    expect(await ttl("v")).toBeLessThanOrEqual(ANONYMOUS_SESSION_SECONDS);
    expect(await ttl("o")).toBeGreaterThan(SESSION_IDLE_SECONDS - 5);
  });
});
