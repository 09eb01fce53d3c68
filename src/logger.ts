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

export function loggerOptions(level: string) {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
  };
}

/** The one logger of a process (server, worker, tests that read the log lines back). */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return destination ? pino(loggerOptions(level), destination) : pino(loggerOptions(level));
}
