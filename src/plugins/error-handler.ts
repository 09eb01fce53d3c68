import type { FastifyError, FastifyPluginAsync, FastifySchemaValidationError } from "fastify";
import fp from "fastify-plugin";
import { BusyError, ImageError } from "../diagnosis/diagnoser.js";
import { ApiError, type FieldProblem, FieldValidationError } from "../http-errors.js";

/**
 * One error shape for the whole API (design.md): `{detail, request_id}`, and for 422 a list of
 * `{loc, msg, type}`. Client errors say what to fix; anything unexpected is a logged 500 with a generic
 * detail, so no stack trace or internal message ever reaches a client.
 */
const errorHandler: FastifyPluginAsync = async (app) => {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const request_id = request.id;
    if (error.validation) {
      const all = error.validation.map((e) => toProblem(e, error.validationContext ?? "body"));
      // One problem per field: a field can break several rules at once (a repeated field is too long, too).
      const problems = all.filter((p, i) => all.findIndex((q) => q.loc.join("/") === p.loc.join("/")) === i);
      request.log.info({ problems }, "request failed validation");
      return reply.code(422).send({ detail: problems, request_id });
    }
    if (error instanceof FieldValidationError) {
      request.log.info({ problems: error.problems }, "request failed validation");
      return reply.code(422).send({ detail: error.problems, request_id });
    }
    if (error instanceof BusyError) {
      request.log.warn({ retryAfter: error.retryAfterSeconds }, "busy: client told to retry later");
      return reply
        .code(503)
        .header("Retry-After", error.retryAfterSeconds)
        .send({ detail: error.message, request_id });
    }
    if (error instanceof ImageError) {
      // The decoder's own words help whoever reads the log; the client gets the fixed message only.
      const cause = error.cause instanceof Error ? error.cause.message : undefined;
      request.log.info({ statusCode: 400, code: error.code, detail: error.message, cause }, "unusable image");
      return reply.code(400).send({ detail: error.message, request_id });
    }
    const clientError = toClientError(error);
    if (clientError) {
      request.log.info({ statusCode: clientError.status, detail: clientError.detail }, "client error");
      return reply.code(clientError.status).send({ detail: clientError.detail, request_id });
    }
    request.log.error({ err: error }, "request failed");
    return reply.code(500).send({ detail: "Internal server error", request_id });
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0] ?? "";
    return reply.code(404).send({ detail: `Not found: ${request.method} ${path}`, request_id: request.id });
  });
};

function toClientError(error: FastifyError): { status: number; detail: string } | undefined {
  if (error instanceof ApiError) return { status: error.statusCode, detail: error.message };
  // Fastify's own client errors (bad JSON, unsupported media type, ...) carry safe, specific messages.
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return { status, detail: error.message };
  return undefined;
}

/** Ajv's error → FastAPI-style `{loc, msg, type}`, with messages a partner can act on. */
function toProblem(e: FastifySchemaValidationError, context: string): FieldProblem {
  const path = e.instancePath.split("/").filter(Boolean);
  const params = e.params as Record<string, unknown>;
  if (e.keyword === "required") {
    const field = String(params.missingProperty);
    return { loc: [context, ...path, field], msg: "Field required", type: "missing" };
  }
  const loc = [context, ...path];
  switch (e.keyword) {
    case "enum": {
      const allowed = (params.allowedValues as unknown[]).map((v) => `'${String(v)}'`);
      return { loc, msg: `Input should be ${allowed.join(", ")}`, type: "enum" };
    }
    case "type":
      return params.type === "boolean"
        ? {
            loc,
            msg: "Input should be a valid boolean: true or false (or 1/0, yes/no, on/off)",
            type: "bool_parsing",
          }
        : { loc, msg: `Input should be a valid ${String(params.type)}`, type: `${String(params.type)}_type` };
    case "maxLength":
      return {
        loc,
        msg: `String should have at most ${String(params.limit)} characters`,
        type: "string_too_long",
      };
    case "minLength":
      return {
        loc,
        msg: `String should have at least ${String(params.limit)} character`,
        type: "string_too_short",
      };
    case "isFile":
      return {
        loc,
        msg: "Input should be a file part (with a filename) of the multipart form",
        type: "file_expected",
      };
    case "pattern":
      return {
        loc,
        msg: `String should match the pattern ${String(params.pattern)}`,
        type: "string_pattern_mismatch",
      };
    default:
      return { loc, msg: e.message ?? "Invalid value", type: e.keyword };
  }
}

export default fp(errorHandler, { name: "error-handler", fastify: "5.x" });
