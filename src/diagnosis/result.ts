import { namesUnsupportedCrop, parseCrop } from "./crops.js";
import { hidesContent } from "./image/quality.js";
import type { Knowledge, NoteRequest } from "./kb.js";
import { CLASS_DESCRIPTION_NOTE } from "./knowledge/notes.js";
import {
  type ClassProbabilities,
  CROP_MISMATCH_NOTE,
  likeliestCrop,
  type Names,
  type Narrowing,
  narrowByCrop,
  narrowByRegion,
} from "./narrowing.js";
import {
  CROPS,
  type Crop,
  type Detection,
  type Diagnosis,
  type DiagnosisContext,
  type DiagnosisResult,
  type QualityIssue,
  type Treatment,
} from "./types.js";

/** A disease beside the top one is named only with at least this (narrowed, calibrated) probability. */
export const SECONDARY_DIAGNOSIS_FLOOR = 0.15;
export const MAX_DIAGNOSES = 3;

/** What the model said about a photo judged to be a plant. */
export interface ModelVerdict {
  /** Calibrated probabilities over the leaf classes, given that the photo shows a plant (sum 1). */
  probabilities: ClassProbabilities;
  /** The plant is a crop the model does not cover (and the farmer named none it does). */
  otherCrop: boolean;
  /** From classes.json: below it the answer names no disease. */
  unsureThreshold: number;
  /** Boxes around the leaves that read as one class (computed only when asked for). */
  boxes(classId: string): Detection[];
}

export interface Assessment {
  requestId: string;
  context: DiagnosisContext;
  isPlant: boolean;
  qualityIssue: QualityIssue | null;
  /** Null when no model is loaded: the answer then says so instead of guessing. */
  model: ModelVerdict | null;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

function noTreatment(): Treatment {
  return {
    immediate_actions: [],
    recommended_products: [],
    natural_alternatives: [],
    prevention: [],
    urgency: null,
  };
}

export const MODEL_UNAVAILABLE = {
  code: "model_unavailable",
  message: "No disease model is loaded: the image was checked, but no diagnosis can be made.",
} as const;

/** Turns the checks and the model's verdict into the API's result, with texts in the asked language and level. */
export function assembleResult(a: Assessment, kb: Knowledge): DiagnosisResult {
  const { language, detailLevel, includeBbox } = a.context;
  const notes: NoteRequest[] = [];
  // A non-plant obviously shows no leaf: saying so again would only repeat the not-a-plant note.
  if (a.qualityIssue && !(a.qualityIssue === "no_leaf_visible" && !a.isPlant)) {
    notes.push({ key: `quality.${a.qualityIssue}` });
  }
  const result: DiagnosisResult = {
    request_id: a.requestId,
    image_analysis: { is_plant: a.isPlant, quality_issue: a.qualityIssue, detected_crop: null },
    is_plant: a.isPlant,
    crop_health: "unknown",
    outcome: "no_model",
    diagnoses: [],
    candidates: [],
    treatment: noTreatment(),
    detections: includeBbox ? [] : null,
    additional_notes: null,
    error: null,
  };

  if (!a.model) {
    notes.push({ key: "no_model" });
    result.error = { ...MODEL_UNAVAILABLE };
  } else if (!a.isPlant) {
    result.outcome = "not_plant";
    if (!hidesContent(a.qualityIssue)) notes.unshift({ key: "not_plant" });
  } else if (a.model.otherCrop || unknownCrop(a.context)) {
    // Diseases of the crops we cover say nothing true of another plant: nothing is ranked or named.
    result.outcome = "crop_not_supported";
    notes.unshift(cropNotSupportedNote(a.context, kb));
  } else {
    result.image_analysis.detected_crop = detectedCrop(a.model);
    const { probabilities, notes: narrowingNotes } = narrow(a.model.probabilities, a.context, kb);
    notes.push(...narrowingNotes);
    const ranked = [...probabilities].sort((x, y) => y[1] - x[1]);
    const [topId, topP] = ranked[0] ?? ["", 0];
    result.candidates = ranked.slice(0, MAX_DIAGNOSES).map(([id, p]) => ({
      id,
      name: kb.name(id, language),
      confidence: round3(p),
    }));
    if (topP < a.model.unsureThreshold) {
      result.outcome = "unsure";
      // Restricted to a crop the photo does not show, the model is unsure because of the crop: the mismatch note
      // says so, and a new photo would not help.
      const best = result.candidates[0];
      if (best && !narrowingNotes.some((n) => n.key === CROP_MISMATCH_NOTE)) {
        // The best guess is named ("possibly …") so nobody has to read `candidates` to use it; what makes a
        // better photo follows, unless the photo's quality note already says it.
        notes.unshift(
          {
            key: "unsure",
            params: { name: best.name, confidence: String(Math.round(best.confidence * 100)) },
          },
          ...(a.qualityIssue ? [] : [{ key: "better_photo" }]),
        );
      }
    } else if (kb.isHealthy(topId)) {
      result.outcome = "healthy";
      result.crop_health = "healthy";
      result.treatment = kb.treatment([topId], language, detailLevel);
      // The crop's own reassurance first ("Your tomato plant looks healthy…"), then what a photo cannot show.
      notes.unshift({ key: CLASS_DESCRIPTION_NOTE, params: { classId: topId } }, { key: "healthy" });
    } else {
      const named = ranked
        .filter(([id, p], i) => i === 0 || (p >= SECONDARY_DIAGNOSIS_FLOOR && !kb.isHealthy(id)))
        .slice(0, MAX_DIAGNOSES);
      result.outcome = "diagnosed";
      result.crop_health = "unhealthy";
      result.diagnoses = named.map(
        ([id, p]): Diagnosis => ({ ...kb.describe(id, language, detailLevel), confidence: round3(p) }),
      );
      result.treatment = kb.treatment(
        named.map(([id]) => id),
        language,
        detailLevel,
      );
      if (includeBbox) result.detections = detectionsOf(result.diagnoses, a.model.boxes);
    }
  }
  result.additional_notes =
    notes.length > 0 ? notes.map((n) => kb.note(n, language, detailLevel)).join(" ") : null;
  return result;
}

/** The boxes of the named diseases, surest first (CONTRACT step 7). */
export function detectionsOf(diagnoses: Diagnosis[], boxes: ModelVerdict["boxes"]): Detection[] {
  return diagnoses.flatMap((d) => boxes(d.id)).sort((x, y) => y.confidence - x.confidence);
}

/** The crop the farmer named, when it is not one the model covers (a typing slip reads the same). */
function unknownCrop(context: DiagnosisContext): string | null {
  const given = context.cropType?.trim();
  return given && namesUnsupportedCrop(given) ? given : null;
}

/** Names the crops we cover, in the reader's language, and the farmer's own crop when one was given. */
function cropNotSupportedNote(context: DiagnosisContext, kb: Knowledge): NoteRequest {
  const { language, detailLevel } = context;
  const crops = new Intl.ListFormat(language, { type: "conjunction" }).format(
    CROPS.map((crop) => kb.note({ key: `crops.${crop}` }, language, detailLevel)),
  );
  const given = unknownCrop(context);
  return given
    ? { key: "crop_unsupported", params: { given, crops } }
    : { key: "crop_not_supported", params: { crops } };
}

/** The stated crop, then the stated region, narrow the model's answer (narrowing.ts); each may add a note. */
function narrow(model: ClassProbabilities, context: DiagnosisContext, kb: Knowledge): Narrowing {
  const { language, detailLevel } = context;
  const names: Names = {
    crop: (crop) => kb.note({ key: `crops.${crop}` }, language, detailLevel),
    disease: (id) => kb.describe(id, language, detailLevel).name,
  };
  let probabilities = model;
  const notes: NoteRequest[] = [];
  const crop = parseCrop(context.cropType ?? "");
  if (crop) {
    const byCrop = narrowByCrop(probabilities, crop, names);
    probabilities = byCrop.probabilities;
    notes.push(...byCrop.notes);
  }
  if (context.region?.trim()) {
    const byRegion = narrowByRegion(probabilities, context.region, kb, names);
    probabilities = byRegion.probabilities;
    notes.push(...byRegion.notes);
  }
  return { probabilities, notes };
}

/** The crop the model sees, when it is sure enough of the crop (summing that crop's classes). */
function detectedCrop(model: ModelVerdict): Crop | null {
  const likeliest = likeliestCrop(model.probabilities);
  if (!likeliest || likeliest.share < model.unsureThreshold) return null;
  return likeliest.crop;
}
