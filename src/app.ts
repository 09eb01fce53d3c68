import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from "fastify";
import type { Redis } from "ioredis";
import type { Config } from "./config.js";
import { consolePlugin, staffSessionsPlugin } from "./console/plugin.js";
import type { Diagnoser } from "./diagnosis/diagnoser.js";
import type { Knowledge } from "./diagnosis/kb.js";
import { HEADERS_TIMEOUT_MAX_MS, TIMEOUT_CHECK_INTERVAL_MS } from "./limits.js";
import apiKey from "./plugins/api-key.js";
import clientErrors, { clientErrorHandler } from "./plugins/client-errors.js";
import docs from "./plugins/docs.js";
import errorHandler from "./plugins/error-handler.js";
import multipart from "./plugins/multipart.js";
import rateLimit from "./plugins/rate-limit.js";
import requestId from "./plugins/request-id.js";
import type { Records } from "./results/records.js";
import type { ResultSink, Routing } from "./results/types.js";
import diagnosisRoute from "./routes/diagnosis.js";
import healthRoute, { version } from "./routes/health.js";
import resultsRoute from "./routes/results.js";
import { fileKeyword } from "./schemas/file.js";
import { sharedSchemas } from "./schemas/index.js";
import type { StaffStore } from "./staff/accounts.js";

export interface AppDeps {
  config: Config;
  diagnoser: Diagnoser;
  /** Present when REDIS_URL is set: shared rate limits, results and channel queues. */
  redis?: Redis;
  /** Stores each REST result and sends it to the farmer when user_data routes it (channels). */
  resultSink?: ResultSink;
  /** The channels `user_data` may route a result to here (a provider runs them); any, when absent. */
  deliverable?: ReadonlySet<Routing["channel"]>;
  /** What is kept about diagnoses; with `staff` and `knowledge`, the results API and the staff console run. */
  records?: Records;
  staff?: StaffStore;
  knowledge?: Knowledge;
  /** Queues an officer's answer to the farmer (present when channels run). */
  enqueueAnswer?: (requestId: string, owner?: string) => Promise<void>;
  /** Queues the deletion of everything about a farmer, in their chain (present when channels run). */
  enqueueForget?: (owner: string) => Promise<void>;
}

export interface AppOptions {
  /** The server passes its logger; tests pass one that writes to a buffer, or false for silence. */
  logger?: FastifyBaseLogger | false;
  /** Namespace of the rate-limit counters in Redis; tests use a unique one per run. */
  rateLimitKeyPrefix?: string;
  /** Namespace of the console's sessions and sign-in counters in Redis; tests use a unique one. */
  keyPrefix?: string;
}

export async function buildApp(deps: AppDeps, options: AppOptions = {}) {
  const { requestTimeoutMs, idleTimeoutMs } = deps.config.limits;
  const app = Fastify({
    ...(options.logger === false ? { logger: false } : { loggerInstance: options.logger }),
    // A slow or silent client cannot hold a connection (and the memory of a half-read upload) for long.
    requestTimeout: requestTimeoutMs,
    connectionTimeout: idleTimeoutMs,
    http: {
      headersTimeout: Math.min(requestTimeoutMs, HEADERS_TIMEOUT_MAX_MS),
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
    },
    trustProxy: trustProxy(deps.config.trustProxy),
    genReqId: () => crypto.randomUUID(),
    logController: new LogController({ requestIdLogLabel: "request_id" }),
    // Every invalid field in one 422 (design.md: `detail` is a list), not the first only. Fastify leaves allErrors
    // off against costly schemas; these forms are a few bounded strings and one file.
    ajv: { customOptions: { allErrors: true }, plugins: [fileKeyword] },
    // Errors raised before routing (e.g. a malformed URL) skip every hook: give them the API's error shape,
    // request id and rate limit here. `app` exists by the time a request arrives.
    frameworkErrors: (error, request, reply: FastifyReply) => {
      void answerFrameworkError(app, error, request, reply);
    },
    // Node's own HTTP errors (malformed request, headers too large, timeouts) in the API's error shape.
    clientErrorHandler: clientErrorHandler((): FastifyBaseLogger => app.log, {
      requestTimeoutMs,
      idleTimeoutMs,
    }),
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Order matters: the error shape and request id first, then who the client is, then what it may spend.
  await app.register(errorHandler);
  await app.register(requestId);
  await app.register(clientErrors, { requestTimeoutMs, idleTimeoutMs });
  await app.register(apiKey, { keys: deps.config.apiKeys });
  await app.register(rateLimit, {
    limits: deps.config.rateLimits,
    redis: deps.redis,
    keyPrefix: options.rateLimitKeyPrefix ?? "ratelimit",
  });
  await app.register(multipart);
  await app.register(docs, { version, serverUrl: deps.config.publicBaseUrl });
  for (const schema of sharedSchemas) app.addSchema(schema);

  await app.register(healthRoute, deps);
  await app.register(diagnosisRoute, deps);
  const { records, staff, knowledge } = deps;
  if (records && staff && knowledge) {
    const consoleDeps = {
      config: deps.config,
      records,
      staff,
      knowledge,
      diagnoser: deps.diagnoser,
      ...(deps.redis ? { redis: deps.redis } : {}),
      ...(options.keyPrefix ? { keyPrefix: options.keyPrefix } : {}),
      ...(deps.enqueueAnswer ? { enqueueAnswer: deps.enqueueAnswer } : {}),
      ...(deps.enqueueForget ? { enqueueForget: deps.enqueueForget } : {}),
    };
    await app.register(staffSessionsPlugin, consoleDeps);
    await app.register(resultsRoute, { records, knowledge });
    await app.register(consolePlugin, consoleDeps);
  }
  return app;
}

async function answerFrameworkError(
  app: FastifyInstance,
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  reply.header("X-Request-ID", request.id);
  try {
    await app.enforceRateLimit(request, reply);
  } catch (err) {
    request.log.warn({ err }, "rate limit not applied to a request that failed before routing");
  }
  if (reply.sent) return;
  request.log.info({ code: error.code, detail: error.message }, "request failed before routing");
  await reply.code(400).send({ detail: error.message, request_id: request.id });
}

/** A hop count means "trust that many proxies": Fastify does this at run time, its types lack the number form. */
function trustProxy(value: Config["trustProxy"]) {
  return typeof value === "number" ? (_address: string, hop: number) => hop < value : value;
}
