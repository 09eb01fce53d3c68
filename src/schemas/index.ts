import {
  BadRequestError,
  InternalError,
  RateLimitError,
  ServiceUnavailableError,
  UnauthorizedError,
  ValidationError,
} from "./errors.js";
import { HealthResponse } from "./health.js";
import { DiagnosisResult } from "./result.js";

/** Registered once with `app.addSchema`: they appear by name under components.schemas of /openapi.json. */
export const sharedSchemas = [
  DiagnosisResult,
  HealthResponse,
  BadRequestError,
  UnauthorizedError,
  ValidationError,
  RateLimitError,
  ServiceUnavailableError,
  InternalError,
];
