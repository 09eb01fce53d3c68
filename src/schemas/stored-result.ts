import { Type } from "@sinclair/typebox";
import { DECISIONS, REVIEW_REASONS, SOURCES } from "../results/types.js";
import { EXAMPLE_REQUEST_ID, exampleResult } from "./examples.js";
import { Nullable, Ref, StringEnum } from "./helpers.js";
import { DiagnosisResult } from "./result.js";

const exampleAnswer = {
  kind: "corrected" as const,
  class_id: "tomato__early_blight",
  name: "Early blight",
  diagnosis: null,
  advice: null,
  answered_at: "2026-11-25T10:12:00.000Z",
};

const OfficerAnswer = Type.Object(
  {
    kind: StringEnum(DECISIONS, {
      description:
        "`confirmed`: the model's reading was right; `corrected`: another class (in `class_id`); `answered`: " +
        "a diagnosis and advice in the officer's own words",
    }),
    class_id: Nullable(Type.String(), {
      description: "The class the officer named; null for a free-text answer",
    }),
    name: Nullable(Type.String(), { description: "That class's name in the result's language" }),
    diagnosis: Nullable(Type.String(), { description: "Free-text diagnosis, as the officer wrote it" }),
    advice: Nullable(Type.String(), { description: "Free-text advice, as the officer wrote it" }),
    answered_at: Type.String({ format: "date-time" }),
  },
  { examples: [exampleAnswer] },
);

const exampleReview = { status: "answered" as const, reasons: ["unsure" as const], answer: exampleAnswer };

const ReviewStatus = Type.Object(
  {
    status: StringEnum(["not_needed", "waiting", "answered"] as const, {
      description:
        "`waiting`: in the officers' review queue; `answered`: an officer answered (see `answer`); " +
        "`not_needed`: the model's answer stands",
    }),
    reasons: Type.Array(StringEnum(REVIEW_REASONS), {
      description:
        "Why it went to review: the model was unsure, the crop is not covered, low confidence, or the farmer said it was wrong",
    }),
    answer: Nullable(OfficerAnswer),
  },
  { examples: [exampleReview] },
);

export const exampleStoredResult = {
  request_id: EXAMPLE_REQUEST_ID,
  code: "K7M4QX",
  created_at: "2026-11-25T10:02:31.000Z",
  source: "api" as const,
  region: "KE",
  result: exampleResult,
  review: exampleReview,
};

export const StoredResultResponse = Type.Object(
  {
    request_id: Type.String({ format: "uuid", examples: [EXAMPLE_REQUEST_ID] }),
    code: Type.String({
      description: "The short code a farmer can type on SMS or USSD",
      examples: ["K7M4QX"],
    }),
    created_at: Type.String({ format: "date-time" }),
    source: StringEnum(SOURCES, { description: "Where the photo came in" }),
    region: Nullable(Type.String(), {
      description: "The region the outbreak view counts it in: an ISO country code, a named group, or null",
    }),
    result: Ref(DiagnosisResult),
    review: ReviewStatus,
  },
  {
    $id: "StoredResult",
    description: "A stored diagnosis (kept 30 days) with the officers' answer, if any",
    examples: [exampleStoredResult],
  },
);
