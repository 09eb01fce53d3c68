import { type TSchema, Type } from "@sinclair/typebox";

const rateLimitHeaders = {
  "X-RateLimit-Limit": Type.Integer({ description: "Requests allowed in the current one-minute window" }),
  "X-RateLimit-Remaining": Type.Integer({ description: "Requests left in the current window" }),
  "X-RateLimit-Reset": Type.Integer({ description: "Unix time (seconds) at which the window resets" }),
};
const requestIdHeader = {
  "X-Request-ID": Type.String({ format: "uuid", description: "Identifies the request; equals request_id" }),
};

/**
 * A documented response: body schema plus the headers every response carries (request id and rate limits),
 * in the content-type form that both Fastify's serializer and @fastify/swagger read.
 */
export function withHeaders(
  description: string,
  schema: TSchema,
  extraHeaders: Record<string, TSchema> = {},
) {
  return {
    description,
    headers: { ...requestIdHeader, ...rateLimitHeaders, ...extraHeaders },
    content: { "application/json": { schema } },
  };
}

export const retryAfterHeader = {
  "Retry-After": Type.Integer({ description: "Seconds to wait before retrying" }),
};
