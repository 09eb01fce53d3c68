import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";

/**
 * The secret that signs staff session cookies when CONSOLE_SESSION_SECRET is not set. With Redis, one is drawn
 * once and shared through it, so every API process accepts the sessions the others made (each drawing its own
 * signed staff out whenever the load balancer sent them to another); the sessions themselves live in the same
 * Redis, so the secret there exposes nothing more. Without Redis, a process of its own draws its own.
 */
export async function sessionSecret(redis: Redis | undefined, keyPrefix = "cd:"): Promise<string> {
  const drawn = randomBytes(32).toString("hex");
  if (!redis) return drawn;
  const key = `${keyPrefix}console:session-secret`;
  await redis.set(key, drawn, "NX");
  return (await redis.get(key)) ?? drawn;
}
