import type { DiagnosisContext, DiagnosisResult } from "./types.js";

/** The one entry point of the core, shared by the REST route, the CLI and the channel worker. */
export interface Diagnoser {
  diagnose(image: Buffer, context: DiagnosisContext, requestId: string): Promise<DiagnosisResult>;
  /** False while the model is missing or still loading: /health reports `degraded`. */
  modelReady(): boolean;
  close(): Promise<void>;
}

export type ImageErrorCode = "empty" | "too_large" | "unsupported_format" | "corrupt" | "too_many_pixels";

/**
 * The image itself is unusable (empty, truncated, not a supported format, too many pixels): a 400. The message
 * is written for the client; the decoder's own words, when there are any, travel in `cause` for the log only.
 */
export class ImageError extends Error {
  constructor(
    message: string,
    readonly code: ImageErrorCode,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "ImageError";
  }
}

/** Too much work is already waiting for the CPU: the caller should try again later (a 503 with Retry-After). */
export class BusyError extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super(`The service is busy: retry in ${retryAfterSeconds} seconds`);
    this.name = "BusyError";
  }
}
