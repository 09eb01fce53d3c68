import { Writable } from "node:stream";
import type { FastifyBaseLogger } from "fastify";
import type { Logger } from "pino";
import { type AppDeps, buildApp } from "../../../src/app.js";
import { loadConfig } from "../../../src/config.js";
import { createLogger } from "../../../src/logger.js";
import { StubDiagnoser } from "./stub-diagnoser.js";

export interface TestAppOptions {
  env?: Record<string, string>;
  deps?: Partial<AppDeps>;
  logger?: FastifyBaseLogger | false;
  rateLimitKeyPrefix?: string;
}

/** An app on the stub diagnoser and in-memory limits, unless the test says otherwise. */
export async function testApp(options: TestAppOptions = {}) {
  const diagnoser = new StubDiagnoser();
  const app = await buildApp(
    { config: loadConfig(options.env ?? {}), diagnoser, ...options.deps },
    { logger: options.logger ?? false, rateLimitKeyPrefix: options.rateLimitKeyPrefix },
  );
  await app.ready();
  return { app, diagnoser };
}

/** The service's own logger (same redaction), writing JSON lines into an array the test can read. */
export function capturedLogger(): { logger: Logger; lines: () => string[] } {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  const logger = createLogger("debug", sink);
  return { logger, lines: () => chunks.join("").split("\n").filter(Boolean) };
}
