import { type TSchema, Type } from "@sinclair/typebox";
import { EXAMPLE_REQUEST_ID } from "./examples.js";
import { Ref } from "./helpers.js";

const rateLimitHeaders = {
  "X-RateLimit-Limit": Type.Integer({
    description: "Requests allowed in the current one-minute window",
    examples: [30],
  }),
  "X-RateLimit-Remaining": Type.Integer({
    description: "Requests left in the current window",
    examples: [29],
  }),
  "X-RateLimit-Reset": Type.Integer({
    description: "Unix time (seconds) at which the window resets",
    examples: [1767225600],
  }),
};
const requestIdHeader = {
  "X-Request-ID": Type.String({
    format: "uuid",
    description: "Identifies the request; equals request_id",
    examples: [EXAMPLE_REQUEST_ID],
  }),
};

/**
 * A documented response: a `$ref` to a shared body schema, that schema's example as the complete example body,
 * and the headers every response carries (request id and rate limits), in the content-type form that both
 * Fastify's serializer and @fastify/swagger read.
 */
export function withHeaders(
  description: string,
  schema: TSchema,
  extraHeaders: Record<string, TSchema> = {},
) {
  const example = (schema.examples as unknown[] | undefined)?.[0];
  if (example === undefined) throw new Error(`withHeaders() needs a schema with an example (${schema.$id})`);
  return {
    description,
    headers: { ...requestIdHeader, ...rateLimitHeaders, ...extraHeaders },
    content: { "application/json": { schema: Ref(schema), example } },
  };
}

export const retryAfterHeader = (example: number) => ({
  "Retry-After": Type.Integer({ description: "Seconds to wait before retrying", examples: [example] }),
});
