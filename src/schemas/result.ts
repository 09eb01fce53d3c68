import { Type } from "@sinclair/typebox";
import { CATEGORIES, CROP_HEALTH, CROPS, OUTCOMES, QUALITY_ISSUES, URGENCIES } from "../diagnosis/types.js";
import {
  EXAMPLE_REQUEST_ID,
  exampleCandidate,
  exampleDetection,
  exampleDiagnosis,
  exampleModelError,
  exampleNote,
  exampleResult,
  exampleTreatment,
  exampleUnsureCandidates,
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

const Candidate = Type.Object(
  {
    id: Type.String({ description: "Stable class id", examples: [exampleCandidate.id] }),
    name: Type.String({ description: "Common name, translated", examples: [exampleCandidate.name] }),
    confidence: Confidence(exampleCandidate.confidence),
  },
  { examples: [exampleCandidate] },
);

const Detection = Type.Object(
  {
    name: Type.String({
      description:
        "The condition seen on this leaf, lower snake case: a diagnosis id without its crop (`tomato__late_blight` → `late_blight`)",
      examples: [exampleDetection.name],
    }),
    bbox: Type.Array(Type.Number({ minimum: 0, maximum: 1 }), {
      minItems: 4,
      maxItems: 4,
      description:
        "[x, y, width, height], each normalised to 0..1 of the width or height of the photo as it is seen (upright: after its EXIF orientation or HEIF rotation)",
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
        "`unhealthy` when a disease is found; `unknown` when none is named: not a plant, an unusable photo, a crop the model does not cover, the model is unsure, or no model is loaded (`error` says so).",
      examples: [exampleResult.crop_health],
    }),
    outcome: StringEnum(OUTCOMES, {
      description:
        "What the service concluded, one key to switch on: `diagnosed` (a disease is named), `healthy`, " +
        "`unsure` (the best reading is too weak to name: see `candidates`), `crop_not_supported` (a plant, " +
        "but not a crop the model covers), `not_plant`, `no_model` (no disease model is loaded).",
      examples: [exampleResult.outcome],
    }),
    diagnoses: Type.Array(Diagnosis, {
      description: "Most likely first. Empty unless `outcome` is `diagnosed`.",
      examples: [exampleResult.diagnoses],
    }),
    candidates: Type.Array(Candidate, {
      maxItems: 3,
      description:
        "The model's best readings, most likely first (calibrated, after narrowing by crop and region), also " +
        "when it is unsure. Not diagnoses: an unsure result has none, but its best guess is here. Empty " +
        "when there is no reading of a covered crop.",
      examples: [exampleUnsureCandidates],
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
