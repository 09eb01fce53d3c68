import { type FastifyPluginAsyncTypebox, Type } from "@fastify/type-provider-typebox";
import type { Knowledge } from "../diagnosis/kb.js";
import { ApiError } from "../http-errors.js";
import type { Records } from "../results/records.js";
import { normalizeShortCode } from "../results/short-code.js";
import type { StoredResult } from "../results/types.js";
import { InternalError, NotFoundError, RateLimitError, UnauthorizedError } from "../schemas/errors.js";
import { retryAfterHeader, withHeaders } from "../schemas/headers.js";
import { StoredResultResponse } from "../schemas/stored-result.js";

export interface ResultsRouteOptions {
  records: Records;
  knowledge: Pick<Knowledge, "name">;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const DESCRIPTION = `A stored diagnosis (kept 30 days), by its \`request_id\` or its short code, with the review status
and the extension officer's answer when there is one.

Needs an API key (or a signed-in staff session): a key reads only the results of its own requests. A result
that does not exist, has expired or was made by another key is the same 404.`;

/** A stored result as partners read it: the result, and what officers made of it. */
export function publicView(stored: StoredResult, knowledge: Pick<Knowledge, "name">) {
  const review = stored.review;
  const decision = review?.decision;
  return {
    request_id: stored.result.request_id,
    code: stored.code,
    created_at: stored.createdAt,
    source: stored.source ?? "api",
    region: stored.region && stored.region !== "unknown" ? stored.region : null,
    result: stored.result,
    review: {
      status: decision ? ("answered" as const) : review ? ("waiting" as const) : ("not_needed" as const),
      reasons: review?.reasons ?? [],
      answer: decision
        ? {
            kind: decision.kind,
            class_id: decision.classId ?? null,
            name: decision.classId ? knowledge.name(decision.classId, stored.language) : null,
            diagnosis: decision.diagnosis ?? null,
            advice: decision.advice ?? null,
            answered_at: decision.at,
          }
        : null,
    },
  };
}

const resultsRoute: FastifyPluginAsyncTypebox<ResultsRouteOptions> = async (app, { records, knowledge }) => {
  // Registered here, not among the shared schemas: they exist in /openapi.json only where this route does.
  app.addSchema(StoredResultResponse);
  app.addSchema(NotFoundError);
  app.get(
    "/results/:id",
    {
      schema: {
        operationId: "getResult",
        summary: "Read a stored result and the officer's answer",
        description: DESCRIPTION,
        tags: ["results"],
        params: Type.Object({
          id: Type.String({
            description: "The request_id of the diagnosis, or its short code (e.g. K7M4QX)",
            maxLength: 64,
          }),
        }),
        security: [{ ApiKeyHeader: [] }, { BearerAuth: [] }],
        response: {
          200: withHeaders("The stored result", StoredResultResponse),
          401: withHeaders("No API key or staff session, or an invalid key", UnauthorizedError),
          404: withHeaders("No such result for this key", NotFoundError),
          429: withHeaders("Rate limit exceeded", RateLimitError, retryAfterHeader(42)),
          500: withHeaders("Internal error", InternalError),
        },
      },
    },
    async (request, reply) => {
      const client = request.apiClient;
      const staff = request.staff;
      if (!client && !staff) {
        reply.header("WWW-Authenticate", 'Bearer realm="crop-diagnosis"');
        throw new ApiError(401, "Send your API key (X-API-Key) to read stored results.");
      }
      const { id } = request.params;
      const code = normalizeShortCode(id);
      const stored = UUID.test(id)
        ? await records.store.get(id.toLowerCase())
        : code
          ? await records.store.getByCode(code)
          : undefined;
      // Staff read every result; a key only its own. Someone else's result is indistinguishable from none.
      if (!stored || (!staff && stored.client !== client?.name)) throw new ApiError(404, `No result ${id}`);
      // A partner's data that an officer's answer changes: never kept by a cache, and never one client's for
      // another (the key may come in X-API-Key, which shared caches do not treat as credentials).
      reply.header("Cache-Control", "no-store").header("Vary", "X-API-Key, Authorization, Cookie");
      return publicView(stored, knowledge);
    },
  );
};

export default resultsRoute;
