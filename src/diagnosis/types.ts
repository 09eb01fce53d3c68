export const LANGUAGES = ["en", "fr", "sw", "es", "pt", "it"] as const;
export type Language = (typeof LANGUAGES)[number];

export const DETAIL_LEVELS = ["simple", "standard", "expert"] as const;
export type DetailLevel = (typeof DETAIL_LEVELS)[number];

export const CROP_HEALTH = ["healthy", "unhealthy", "unknown"] as const;
export type CropHealth = (typeof CROP_HEALTH)[number];

export const CATEGORIES = [
  "fungal",
  "bacterial",
  "viral",
  "oomycete",
  "pest",
  "nutrient_deficiency",
  "abiotic",
] as const;
export type Category = (typeof CATEGORIES)[number];

export const URGENCIES = ["low", "moderate", "high", "critical"] as const;
export type Urgency = (typeof URGENCIES)[number];

export const QUALITY_ISSUES = ["blurry", "too_dark", "overexposed", "too_small", "no_leaf_visible"] as const;
export type QualityIssue = (typeof QUALITY_ISSUES)[number];

export const CROPS = ["bean", "maize", "pepper", "potato", "rice", "tomato"] as const;
export type Crop = (typeof CROPS)[number];

/**
 * What the service concluded, as one key a client can switch on (an addition to the spec's fields):
 * `diagnosed` a disease is named; `healthy`; `unsure` the model's best reading is too weak to name (see
 * `candidates`); `crop_not_supported` a plant, but not one of the crops the model covers; `not_plant`;
 * `no_model` no disease model is loaded.
 */
export const OUTCOMES = [
  "diagnosed",
  "healthy",
  "unsure",
  "crop_not_supported",
  "not_plant",
  "no_model",
] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** What a caller knows about the photo besides its bytes (the optional form fields of the spec). */
export interface DiagnosisContext {
  cropType?: string;
  region?: string;
  growthStage?: string;
  description?: string;
  language: Language;
  detailLevel: DetailLevel;
  includeBbox: boolean;
}

export interface ImageAnalysis {
  is_plant: boolean;
  quality_issue: QualityIssue | null;
  /** Crop the model recognised (null when no plant or too unsure). An addition to the spec's fields. */
  detected_crop: Crop | null;
}

export interface Diagnosis {
  /** Model class id (e.g. `tomato__late_blight`); an addition so clients can key on a stable id. */
  id: string;
  scientific_name: string;
  eppo_code: string;
  name: string;
  category: Category;
  confidence: number;
  urgency: Urgency;
  description: string;
  affected_parts: string[];
  reference_images: string[];
}

export interface Treatment {
  immediate_actions: string[];
  recommended_products: string[];
  natural_alternatives: string[];
  prevention: string[];
  urgency: Urgency | null;
}

/** One of the model's readings, named whether or not it was strong enough to be a diagnosis. */
export interface Candidate {
  id: string;
  name: string;
  confidence: number;
}

export interface Detection {
  name: string;
  bbox: [number, number, number, number];
  confidence: number;
}

export interface DiagnosisResult {
  request_id: string;
  image_analysis: ImageAnalysis;
  /** Mirror of image_analysis.is_plant for clients of the spec's other layout (design.md). */
  is_plant: boolean;
  crop_health: CropHealth;
  outcome: Outcome;
  diagnoses: Diagnosis[];
  /**
   * The model's best readings (up to three, calibrated, after narrowing by crop and region), also when it is
   * unsure: officers and farmer-facing texts ("possibly ...") may use them; only `diagnoses` are diagnoses.
   * Empty when the model gave no reading of a covered crop (not a plant, crop not supported, no model).
   */
  candidates: Candidate[];
  treatment: Treatment;
  detections: Detection[] | null;
  additional_notes: string | null;
  error: { code: string; message: string } | null;
}
