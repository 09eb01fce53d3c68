import type { DiagnosisContext, DiagnosisResult } from "./types.js";

/** The one entry point of the core, shared by the REST route, the CLI and the channel worker. */
export interface Diagnoser {
  diagnose(image: Buffer, context: DiagnosisContext, requestId: string): Promise<DiagnosisResult>;
  /** False while the model is missing or still loading: /health reports `degraded`. */
  modelReady(): boolean;
  close(): Promise<void>;
}

/** The image itself is unusable (empty, truncated, not a supported format, too many pixels): a 400. */
export class ImageError extends Error {
  constructor(
    message: string,
    readonly code: "empty" | "too_large" | "unsupported_format" | "corrupt" | "too_many_pixels",
  ) {
    super(message);
    this.name = "ImageError";
  }
}
