import type { SessionStore } from "@fastify/session";
import type { Redis } from "ioredis";
import { ANONYMOUS_SESSION_SECONDS, MEMORY_SESSIONS, SESSION_IDLE_SECONDS } from "../limits.js";

type Session = Parameters<SessionStore["set"]>[1];

/** A session lives SESSION_IDLE_SECONDS once its staff member signed in, ANONYMOUS_SESSION_SECONDS before. */
const signedIn = (session: Session) => Boolean((session as { staff?: string }).staff);
const lifetime = (session: Session) => (signedIn(session) ? SESSION_IDLE_SECONDS : ANONYMOUS_SESSION_SECONDS);

/**
 * Staff sessions: in Redis when the service has one (any instance serves any request), else in this
 * process, bounded per kind. Each write renews the deadline.
 */
export function createSessionStore(
  redis: Redis | undefined,
  prefix = "cd:",
  maxInMemory = MEMORY_SESSIONS,
): SessionStore {
  if (redis) {
    const key = (id: string) => `${prefix}session:${id}`;
    return {
      set(id, session, done) {
        redis.set(key(id), JSON.stringify(session), "EX", lifetime(session)).then(() => done(), done);
      },
      get(id, done) {
        redis.get(key(id)).then((raw) => done(null, raw ? (JSON.parse(raw) as Session) : null), done);
      },
      destroy(id, done) {
        redis.del(key(id)).then(() => done(), done);
      },
    };
  }
  type Kept = { session: Session; expires: number };
  const staff = new Map<string, Kept>();
  const anonymous = new Map<string, Kept>();
  // A session moves between the two as its visitor signs in or out: forgetting it clears both.
  const forget = (id: string) => {
    staff.delete(id);
    anonymous.delete(id);
  };
  return {
    set(id, session, done) {
      forget(id);
      const kind = signedIn(session) ? staff : anonymous;
      kind.set(id, { session, expires: Date.now() + lifetime(session) * 1000 });
      while (kind.size > maxInMemory) kind.delete(kind.keys().next().value as string);
      done();
    },
    get(id, done) {
      const found = staff.get(id) ?? anonymous.get(id);
      if (found && found.expires <= Date.now()) forget(id);
      done(null, found && found.expires > Date.now() ? found.session : null);
    },
    destroy(id, done) {
      forget(id);
      done();
    },
  };
}
