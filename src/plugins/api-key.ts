import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import type { ApiKey } from "../config.js";
import { ApiError } from "../http-errors.js";

/** An enterprise client identified by its API key (design.md): its requests count against its own limit. */
export interface ApiClient {
  name: string;
  perMinute: number;
}

declare module "fastify" {
  interface FastifyRequest {
    /** The key holder, or null for anonymous access (limited per IP). */
    apiClient: ApiClient | null;
    /** A key was sent and matches none configured: the request ends in 401, never downgraded to anonymous. */
    apiKeyRejected: boolean;
  }
}

/** The key from `X-API-Key`, or else from `Authorization: Bearer <key>`; undefined when none is sent. */
function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers["x-api-key"];
  const fromHeader = (Array.isArray(header) ? header[0] : header)?.trim();
  if (fromHeader) return fromHeader;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? "");
  return match?.[1];
}

/**
 * Keys are configured as SHA-256 hashes, so neither the environment nor a memory dump reveals them. Every
 * configured hash is compared, in constant time, so the response time does not tell which prefix matched.
 */
function matcher(keys: ApiKey[]): (key: string) => ApiClient | undefined {
  const digests = keys.map((k) => ({
    client: { name: k.name, perMinute: k.perMinute },
    digest: Buffer.from(k.sha256, "hex"),
  }));
  return (key) => {
    const presented = createHash("sha256").update(key, "utf8").digest();
    let found: ApiClient | undefined;
    for (const { client, digest } of digests) {
      if (timingSafeEqual(presented, digest)) found = client;
    }
    return found;
  };
}

const apiKey: FastifyPluginAsync<{ keys: ApiKey[] }> = async (app, { keys }) => {
  const identify = matcher(keys);
  app.decorateRequest("apiClient", null);
  app.decorateRequest("apiKeyRejected", false);

  // Identification only: the rate limiter (next onRequest hook) needs to know whose budget to charge, and
  // it charges a rejected key's IP, which also slows down anyone guessing keys.
  app.addHook("onRequest", async (request) => {
    const key = presentedKey(request);
    if (key === undefined) return;
    const client = identify(key);
    if (client) request.apiClient = client;
    else request.apiKeyRejected = true;
  });

  app.addHook("preParsing", async (request, reply) => {
    if (!request.apiKeyRejected) return;
    reply.header("WWW-Authenticate", 'Bearer realm="crop-diagnosis"');
    throw new ApiError(401, "Invalid API key. Send a valid key, or no key at all for the per-IP limits.");
  });
};

export default fp(apiKey, { name: "api-key", fastify: "5.x" });
