import type { Detection, Diagnosis, DiagnosisResult, Treatment } from "../diagnosis/types.js";

/**
 * The example values of /openapi.json, in one place so that each field's example and the complete example
 * bodies of the responses tell the same story: an English, standard-level answer for a tomato leaf with
 * late blight. Typed by the core's result types, so an example cannot drift from the result's shape.
 */
export const EXAMPLE_REQUEST_ID = "6f1c2c3e-5f7a-4d7e-9a51-0c2d4e8b9f10";

export const exampleDiagnosis: Diagnosis = {
  id: "tomato__late_blight",
  scientific_name: "Phytophthora infestans",
  eppo_code: "PHYTIN",
  name: "Tomato late blight",
  category: "oomycete",
  confidence: 0.91,
  urgency: "critical",
  description:
    "Late blight is caused by a water mould (an oomycete, a fungus-like organism). Leaves show large, dark, " +
    "water-soaked patches, with white fuzzy growth on the underside in humid weather.",
  affected_parts: ["leaves", "stems", "fruits"],
  reference_images: ["https://gd.eppo.int/taxon/PHYTIN/photos"],
};

export const exampleTreatment: Treatment = {
  immediate_actions: [
    "Apply a late blight fungicide immediately and keep the interval stated on the label.",
    "Remove and destroy infected plants: bag them or bury them deep, never compost them.",
  ],
  recommended_products: [
    "Protectant fungicides: mancozeb, chlorothalonil or copper, applied before infection.",
    "Always follow the label and use only products registered for tomatoes in your country.",
  ],
  natural_alternatives: ["Resistant varieties (for example with the Ph-2 and Ph-3 genes)."],
  prevention: ["Drip irrigation and good spacing so leaves dry quickly."],
  urgency: "critical",
};

export const exampleDetection: Detection = {
  name: "late_blight",
  bbox: [0.12, 0.3, 0.25, 0.2],
  confidence: 0.78,
};

export const exampleCandidate = { id: "tomato__early_blight", name: "Tomato early blight", confidence: 0.41 };

/** What an unsure answer lists: the best guesses, none strong enough to be a diagnosis. */
export const exampleUnsureCandidates = [
  exampleCandidate,
  { id: "tomato__septoria_leaf_spot", name: "Tomato septoria leaf spot", confidence: 0.27 },
  { id: "tomato__late_blight", name: "Tomato late blight", confidence: 0.12 },
];

export const exampleNote =
  'The region "Atlantis" was not recognised, so the result was not adjusted to local diseases. Use a country ' +
  "name or code, for example Kenya or KE.";

export const exampleModelError = {
  code: "model_unavailable",
  message: "No disease model is loaded: the image was checked, but no diagnosis can be made.",
};

/** A typical success: one disease found, boxes not asked for, nothing to add, no error. */
export const exampleResult: DiagnosisResult = {
  request_id: EXAMPLE_REQUEST_ID,
  image_analysis: { is_plant: true, quality_issue: null, detected_crop: "tomato" },
  is_plant: true,
  crop_health: "unhealthy",
  outcome: "diagnosed",
  diagnoses: [exampleDiagnosis],
  candidates: [
    { id: exampleDiagnosis.id, name: exampleDiagnosis.name, confidence: exampleDiagnosis.confidence },
  ],
  treatment: exampleTreatment,
  detections: null,
  additional_notes: null,
  error: null,
};

export const exampleHealth = { status: "healthy", version: "0.1.0", checks: { model: "ok", redis: "ok" } };
