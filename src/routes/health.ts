import { readFileSync } from "node:fs";
import path from "node:path";
import type { FastifyPluginAsync } from "fastify";
import type { AppDeps } from "../app.js";
import { ROOT_DIR } from "../config.js";
import { InternalError, RateLimitError, UnauthorizedError } from "../schemas/errors.js";
import { retryAfterHeader, withHeaders } from "../schemas/headers.js";
import { HealthResponse } from "../schemas/health.js";

export const { version } = JSON.parse(readFileSync(path.join(ROOT_DIR, "package.json"), "utf8")) as {
  version: string;
};

type Check = "ok" | "not_ready";

const healthRoute: FastifyPluginAsync<AppDeps> = async (app, deps) => {
  app.get(
    "/health",
    {
      config: { rateLimit: "health" },
      schema: {
        operationId: "getHealth",
        summary: "Health status",
        description:
          "Service status and version. Always 200 while the process serves; `degraded` when the model or Redis " +
          "(when configured) is not ready. Rate limit: 100 requests per minute per IP.",
        tags: ["health"],
        response: {
          200: withHeaders("Service status", HealthResponse),
          401: withHeaders("Invalid API key", UnauthorizedError),
          429: withHeaders("Rate limit exceeded", RateLimitError, retryAfterHeader(42)),
          500: withHeaders("Internal error", InternalError),
        },
      },
    },
    async () => {
      const checks: Record<string, Check> = { model: deps.diagnoser.modelReady() ? "ok" : "not_ready" };
      if (deps.redis) checks.redis = deps.redis.status === "ready" ? "ok" : "not_ready";
      const healthy = Object.values(checks).every((c) => c === "ok");
      return { status: healthy ? "healthy" : "degraded", version, checks };
    },
  );
};

export default healthRoute;
