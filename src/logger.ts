import { type DestinationStream, type Logger, pino } from "pino";

// Credentials travel in headers, webhook bodies and provider URLs: redact them wherever pino might see them.
export const REDACT_PATHS = [
  "req.headers.authorization",
  "req.headers['x-api-key']",
  "req.headers['x-twilio-signature']",
  "req.headers['x-telegram-bot-api-secret-token']",
  "req.headers.cookie",
  "headers.authorization",
  "headers['x-api-key']",
  "*.authToken",
  "*.apiKey",
  "*.botToken",
  "*.token",
  "*.password",
];

/** A request's path without its query string: what log lines show of a URL. */
export const pathOf = (url: string): string => url.split("?", 1)[0] ?? url;

interface LoggedRequest {
  method: string;
  url: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

/**
 * A request as log lines show it: Fastify's fields, with the path alone. Query strings carry what must not be
 * kept in logs: the farmer's phone number or chat id the console's look-up was asked for, and pages' `next=`.
 */
export function requestForLog(request: LoggedRequest) {
  // Anything else logged under `req` (a test's headers, a hand-made object) goes out as it is, redacted.
  if (typeof request?.url !== "string") return request;
  return {
    method: request.method,
    url: pathOf(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

export function loggerOptions(level: string) {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    serializers: { req: requestForLog },
  };
}

/** The one logger of a process (server, worker, tests that read the log lines back). */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return destination ? pino(loggerOptions(level), destination) : pino(loggerOptions(level));
}

/**
 * An error and its causes in one line, e.g. `TypeError: fetch failed <- getaddrinfo ENOTFOUND api.twilio.com
 * (ENOTFOUND)`: the real reason of a failed download is the cause, not the TypeError.
 */
export function errorChain(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    if (current instanceof Error) {
      const code = (current as { code?: unknown }).code;
      const name = current.name === "Error" ? "" : `${current.name}: `;
      parts.push(`${name}${current.message}${typeof code === "string" ? ` (${code})` : ""}`);
      current = current.cause;
    } else {
      parts.push(String(current));
      current = undefined;
    }
  }
  return parts.join(" <- ");
}

/** A crash is logged as one JSON line, not as Node's multi-line stack dump on stderr, and ends the process. */
export function logUncaught(logger: Logger): void {
  const fatal = (kind: string) => (error: unknown) => {
    logger.fatal({ err: error }, kind);
    process.exit(1);
  };
  process.on("uncaughtException", fatal("uncaught exception"));
  process.on("unhandledRejection", fatal("unhandled promise rejection"));
}
