import { Type } from "@sinclair/typebox";
import { BusyError } from "../diagnosis/diagnoser.js";
import { MAX_INPUT_MEGAPIXELS } from "../diagnosis/image/limits.js";
import { BUSY_RETRY_SECONDS } from "../diagnosis/model/pool.js";
import { EXAMPLE_REQUEST_ID } from "./examples.js";

const RequestId = Type.String({
  format: "uuid",
  description: "Same as the X-Request-ID header",
  examples: [EXAMPLE_REQUEST_ID],
});

const errorBody = (id: string, description: string, example: string) =>
  Type.Object(
    { detail: Type.String({ examples: [example] }), request_id: RequestId },
    { $id: id, description, examples: [{ detail: example, request_id: EXAMPLE_REQUEST_ID }] },
  );

export const BadRequestError = errorBody(
  "BadRequestError",
  `Malformed multipart body, or an image that is empty, over 10 MB, not JPEG/PNG/WebP/HEIC/HEIF, or over ${MAX_INPUT_MEGAPIXELS} megapixels`,
  "The image is larger than 10 MB",
);
export const UnauthorizedError = errorBody(
  "UnauthorizedError",
  "An API key was sent and is not valid, or none was sent where one is needed (routing keys in user_data, stored results). Other requests without a key are served on the per-IP limits.",
  "Invalid API key. Send a valid key, or no key at all for the per-IP limits.",
);
export const RateLimitError = errorBody(
  "RateLimitError",
  "Too many requests in this one-minute window: wait Retry-After seconds, then retry with exponential backoff",
  "Rate limit exceeded: 30 requests per minute. Retry in 42 seconds.",
);
export const ServiceUnavailableError = errorBody(
  "ServiceUnavailableError",
  "Too many photos are already waiting for analysis: wait Retry-After seconds, then retry",
  new BusyError(BUSY_RETRY_SECONDS).message,
);
export const InternalError = errorBody(
  "InternalError",
  "Unexpected failure; quote the request_id when reporting it",
  "Internal server error",
);
export const NotFoundError = errorBody(
  "NotFoundError",
  "No stored result by that id or code for this API key (never made, expired after 30 days, or another key's)",
  "No result K7M4QX",
);

const exampleProblem = {
  loc: ["body", "language"],
  msg: "Input should be 'en', 'fr', 'sw', 'es', 'pt', 'it'",
  type: "enum",
};

export const ValidationError = Type.Object(
  {
    detail: Type.Array(
      Type.Object({
        loc: Type.Array(Type.Union([Type.String(), Type.Integer()]), {
          description:
            "Where the problem is: the part of the request, then the field (and key inside user_data)",
          examples: [exampleProblem.loc],
        }),
        msg: Type.String({ examples: [exampleProblem.msg] }),
        type: Type.String({ examples: [exampleProblem.type] }),
      }),
      { description: "One entry per invalid field", examples: [[exampleProblem]] },
    ),
    request_id: RequestId,
  },
  {
    $id: "ValidationError",
    description: "A form field failed validation (missing image, unknown language, bad user_data, ...)",
    examples: [{ detail: [exampleProblem], request_id: EXAMPLE_REQUEST_ID }],
  },
);
