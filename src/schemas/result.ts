import { Type } from "@sinclair/typebox";
import { CATEGORIES, CROP_HEALTH, CROPS, QUALITY_ISSUES, URGENCIES } from "../diagnosis/types.js";
import {
  EXAMPLE_REQUEST_ID,
  exampleDetection,
  exampleDiagnosis,
  exampleModelError,
  exampleNote,
  exampleResult,
  exampleTreatment,
} from "./examples.js";
import { Nullable, StringEnum } from "./helpers.js";

const Confidence = (example: number) =>
  Type.Number({ minimum: 0, maximum: 1, description: "Between 0 and 1", examples: [example] });
const TextList = (example: string[]) =>
  Type.Array(Type.String(), { description: "Translated", examples: [example] });

const ImageAnalysis = Type.Object(
  {
    is_plant: Type.Boolean({
      description: "True when the image shows a plant. Read this one (canonical).",
      examples: [true],
    }),
    quality_issue: Nullable(StringEnum(QUALITY_ISSUES), {
      description: "Why the photo is hard to use, or null when it is fine. English key.",
      examples: ["blurry"],
    }),
    detected_crop: Nullable(StringEnum(CROPS), {
      description: "Crop recognised in the photo, or null when there is no plant or the model is unsure.",
      examples: ["tomato"],
    }),
  },
  { examples: [exampleResult.image_analysis] },
);

const Diagnosis = Type.Object(
  {
    id: Type.String({ description: "Stable class id of the diagnosis", examples: [exampleDiagnosis.id] }),
    scientific_name: Type.String({ examples: [exampleDiagnosis.scientific_name] }),
    eppo_code: Type.String({ description: "EPPO code of the cause", examples: [exampleDiagnosis.eppo_code] }),
    name: Type.String({ description: "Common name, translated", examples: [exampleDiagnosis.name] }),
    category: StringEnum(CATEGORIES, { examples: [exampleDiagnosis.category] }),
    confidence: Confidence(exampleDiagnosis.confidence),
    urgency: StringEnum(URGENCIES, { examples: [exampleDiagnosis.urgency] }),
    description: Type.String({ description: "Translated", examples: [exampleDiagnosis.description] }),
    affected_parts: Type.Array(Type.String(), { examples: [exampleDiagnosis.affected_parts] }),
    reference_images: Type.Array(Type.String({ format: "uri" }), {
      examples: [exampleDiagnosis.reference_images],
    }),
  },
  { examples: [exampleDiagnosis] },
);

const Treatment = Type.Object(
  {
    immediate_actions: TextList(exampleTreatment.immediate_actions),
    recommended_products: TextList(exampleTreatment.recommended_products),
    natural_alternatives: TextList(exampleTreatment.natural_alternatives),
    prevention: TextList(exampleTreatment.prevention),
    urgency: Nullable(StringEnum(URGENCIES), {
      description: "The highest urgency among the diagnoses; null when the crop is healthy.",
      examples: [exampleTreatment.urgency],
    }),
  },
  { examples: [exampleTreatment] },
);

const Detection = Type.Object(
  {
    name: Type.String({ description: "Issue id, lower snake case", examples: [exampleDetection.name] }),
    bbox: Type.Array(Type.Number({ minimum: 0, maximum: 1 }), {
      minItems: 4,
      maxItems: 4,
      description: "[x, y, width, height], each normalised to 0..1 of the image's width or height",
      examples: [exampleDetection.bbox],
    }),
    confidence: Confidence(exampleDetection.confidence),
  },
  { examples: [exampleDetection] },
);

export const DiagnosisResult = Type.Object(
  {
    request_id: Type.String({
      format: "uuid",
      description: "Also sent as the X-Request-ID header",
      examples: [EXAMPLE_REQUEST_ID],
    }),
    image_analysis: ImageAnalysis,
    is_plant: Type.Boolean({
      description: "Mirror of image_analysis.is_plant for clients of the spec's other layout.",
      examples: [true],
    }),
    crop_health: StringEnum(CROP_HEALTH, {
      description:
        "`unhealthy` when a disease is found; `unknown` when the image is not a usable plant photo.",
      examples: [exampleResult.crop_health],
    }),
    diagnoses: Type.Array(Diagnosis, {
      description: "Most likely first",
      examples: [exampleResult.diagnoses],
    }),
    treatment: Treatment,
    detections: Nullable(Type.Array(Detection), {
      description: "An array only when include_bbox is true",
      examples: [[exampleDetection]],
    }),
    additional_notes: Nullable(Type.String(), {
      description: "Notes about the photo or the answer (translated), or null when there is nothing to add.",
      examples: [exampleNote],
    }),
    error: Nullable(
      Type.Object({
        code: Type.String({ examples: [exampleModelError.code] }),
        message: Type.String({ examples: [exampleModelError.message] }),
      }),
      {
        description:
          "Null on success; says why no diagnosis could be made (e.g. no disease model is loaded).",
        examples: [exampleModelError],
      },
    ),
  },
  { $id: "DiagnosisResult", description: "The diagnosis of one photo", examples: [exampleResult] },
);
