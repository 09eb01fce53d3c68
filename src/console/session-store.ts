import type { SessionStore } from "@fastify/session";
import type { Redis } from "ioredis";
import { SESSION_IDLE_SECONDS } from "../limits.js";

type Session = Parameters<SessionStore["set"]>[1];

/**
 * Staff sessions: in Redis when the service has one (any instance serves any request), else in this
 * process, bounded. Each write renews the idle deadline.
 */
export function createSessionStore(redis: Redis | undefined, prefix = "cd:"): SessionStore {
  if (redis) {
    const key = (id: string) => `${prefix}session:${id}`;
    return {
      set(id, session, done) {
        redis.set(key(id), JSON.stringify(session), "EX", SESSION_IDLE_SECONDS).then(() => done(), done);
      },
      get(id, done) {
        redis.get(key(id)).then((raw) => done(null, raw ? (JSON.parse(raw) as Session) : null), done);
      },
      destroy(id, done) {
        redis.del(key(id)).then(() => done(), done);
      },
    };
  }
  const sessions = new Map<string, { session: Session; expires: number }>();
  const MAX = 10_000;
  return {
    set(id, session, done) {
      sessions.delete(id);
      sessions.set(id, { session, expires: Date.now() + SESSION_IDLE_SECONDS * 1000 });
      while (sessions.size > MAX) sessions.delete(sessions.keys().next().value as string);
      done();
    },
    get(id, done) {
      const found = sessions.get(id);
      if (found && found.expires <= Date.now()) sessions.delete(id);
      done(null, found && found.expires > Date.now() ? found.session : null);
    },
    destroy(id, done) {
      sessions.delete(id);
      done();
    },
  };
}
