import { Type } from "@sinclair/typebox";
import { CATEGORIES, CROP_HEALTH, CROPS, QUALITY_ISSUES, URGENCIES } from "../diagnosis/types.js";
import { Nullable, StringEnum } from "./helpers.js";

const Confidence = Type.Number({ minimum: 0, maximum: 1, description: "Between 0 and 1" });
const TextList = (description: string, example: string) =>
  Type.Array(Type.String(), { description, examples: [[example]] });

const ImageAnalysis = Type.Object({
  is_plant: Type.Boolean({ description: "True when the image shows a plant. Read this one (canonical)." }),
  quality_issue: Nullable(StringEnum(QUALITY_ISSUES), {
    description: "Why the photo is hard to use, or null when it is fine. English key.",
  }),
  detected_crop: Nullable(StringEnum(CROPS), {
    description: "Crop recognised in the photo, or null when there is no plant or the model is unsure.",
  }),
});

const Diagnosis = Type.Object({
  id: Type.String({ description: "Stable class id of the diagnosis", examples: ["tomato__late_blight"] }),
  scientific_name: Type.String({ examples: ["Phytophthora infestans"] }),
  eppo_code: Type.String({ description: "EPPO code of the cause", examples: ["PHYTIN"] }),
  name: Type.String({ description: "Common name, translated", examples: ["Mildiou de la tomate"] }),
  category: StringEnum(CATEGORIES),
  confidence: Confidence,
  urgency: StringEnum(URGENCIES),
  description: Type.String({ description: "Translated" }),
  affected_parts: Type.Array(Type.String(), { examples: [["leaves", "stems"]] }),
  reference_images: Type.Array(Type.String({ format: "uri" })),
});

const Treatment = Type.Object({
  immediate_actions: TextList("Translated", "Remove and destroy infected leaves"),
  recommended_products: TextList("Translated", "Copper-based fungicide"),
  natural_alternatives: TextList("Translated", "Baking soda spray"),
  prevention: TextList("Translated", "Water at the base of the plant"),
  urgency: Nullable(StringEnum(URGENCIES), {
    description: "The highest urgency among the diagnoses; null when the crop is healthy.",
  }),
});

const Detection = Type.Object({
  name: Type.String({ description: "Issue id, lower snake case", examples: ["late_blight_lesion"] }),
  bbox: Type.Array(Type.Number({ minimum: 0, maximum: 1 }), {
    minItems: 4,
    maxItems: 4,
    description: "[x, y, width, height], each normalised to 0..1 of the image's width or height",
    examples: [[0.12, 0.3, 0.25, 0.2]],
  }),
  confidence: Confidence,
});

export const DiagnosisResult = Type.Object(
  {
    request_id: Type.String({ format: "uuid", description: "Also sent as the X-Request-ID header" }),
    image_analysis: ImageAnalysis,
    is_plant: Type.Boolean({
      description: "Mirror of image_analysis.is_plant for clients of the spec's other layout.",
    }),
    crop_health: StringEnum(CROP_HEALTH, {
      description:
        "`unhealthy` when a disease is found; `unknown` when the image is not a usable plant photo.",
    }),
    diagnoses: Type.Array(Diagnosis, { description: "Most likely first" }),
    treatment: Treatment,
    detections: Nullable(Type.Array(Detection), { description: "An array only when include_bbox is true" }),
    additional_notes: Nullable(Type.String()),
    error: Nullable(
      Type.Object({
        code: Type.String({ examples: ["model_unavailable"] }),
        message: Type.String(),
      }),
      {
        description:
          "Null on success; says why no diagnosis could be made (e.g. no disease model is loaded).",
      },
    ),
  },
  { $id: "DiagnosisResult", description: "The diagnosis of one photo" },
);
