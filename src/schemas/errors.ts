import { Type } from "@sinclair/typebox";

const RequestId = Type.String({ format: "uuid", description: "Same as the X-Request-ID header" });

const errorBody = (id: string, description: string, example: string) =>
  Type.Object(
    { detail: Type.String({ examples: [example] }), request_id: RequestId },
    { $id: id, description },
  );

export const BadRequestError = errorBody(
  "BadRequestError",
  "Malformed multipart body, or an image that is empty, over 10 MB, not JPEG/PNG/WebP/HEIC/HEIF, or over 40 megapixels",
  "The image is larger than 10 MB",
);
export const UnauthorizedError = errorBody(
  "UnauthorizedError",
  "An API key was sent and is not valid. Requests without a key are served on the per-IP limits.",
  "Invalid API key",
);
export const RateLimitError = errorBody(
  "RateLimitError",
  "Too many requests in this one-minute window: wait Retry-After seconds, then retry with exponential backoff",
  "Rate limit exceeded: 30 requests per minute. Retry in 42 seconds.",
);
export const InternalError = errorBody(
  "InternalError",
  "Unexpected failure; quote the request_id when reporting it",
  "Internal server error",
);
export const NotFoundError = errorBody("NotFoundError", "No such route", "Not found: GET /diagnosis/123");

export const ValidationError = Type.Object(
  {
    detail: Type.Array(
      Type.Object({
        loc: Type.Array(Type.Union([Type.String(), Type.Integer()]), {
          description:
            "Where the problem is: the part of the request, then the field (and key inside user_data)",
          examples: [["body", "language"]],
        }),
        msg: Type.String({ examples: ["Input should be 'en', 'fr', 'sw', 'es', 'pt' or 'it'"] }),
        type: Type.String({ examples: ["enum"] }),
      }),
    ),
    request_id: RequestId,
  },
  {
    $id: "ValidationError",
    description: "A form field failed validation (missing image, unknown language, bad user_data, ...)",
  },
);
