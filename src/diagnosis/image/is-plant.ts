import type { QualityIssue } from "../types.js";
import { distortsColour } from "./quality.js";

/**
 * Below this leaf-coloured share a photo in which the leaf finder sees no leaf shows no plant (documents, grey
 * objects, most animals and objects). Chosen on the validation split (89 non-plant, 976 leaf photos): with the
 * first model, the veto cut false accepts from 56 % to 36 % while false rejects rose from 1.0 % to 1.1 %.
 */
export const MIN_PLANT_FRACTION = 0.08;

export interface PlantEvidence {
  /** The model's votes, or null without a model. */
  model: {
    /** Calibrated `non_plant` probability, averaged over the views. */
    nonPlantProbability: number;
    /** `non_plant_threshold` of classes.json (chosen by the training on validation photos). */
    nonPlantThreshold: number;
    /** The centre view's squared Mahalanobis distance to the nearest class the model was trained on. */
    distance: number;
    /** `distance_threshold` of classes.json. */
    distanceThreshold: number;
    /** Leaves the leaf finder found in the centre view. */
    leavesFound: number;
  } | null;
  plantFraction: number;
  qualityIssue: QualityIssue | null;
}

/**
 * The rule: not a plant when the model says `non_plant` with at least its threshold probability, OR when the
 * photo is far from everything the model was trained on (its features' distance to the nearest class), OR
 * when the photo has (almost) no leaf colour and the leaf finder sees no leaf either. Any veto suffices. The
 * model knows animals, objects and people, but a document or a plain grey object is far from anything it was
 * trained on and its class scores may say anything: the distance and colour catch those. Colour never overrides
 * the model the other way: grass behind a dog is green. Nor does it overrule leaves the finder saw: on the
 * validation split, with the shipped model, the colour veto alone rejected 9 of 263 PlantDoc field photos and 10
 * of 204 other-plant photos, all with leaves found (those looked at are colour negatives the source left
 * uninverted: purple leaves), and caught no non-plant photo the model let through. In a photo too dark, colour
 * says nothing and only the model decides; without a model, only colour does.
 */
export function isPlant(evidence: PlantEvidence): boolean {
  const { model } = evidence;
  if (
    model &&
    (model.nonPlantProbability >= model.nonPlantThreshold || model.distance >= model.distanceThreshold)
  )
    return false;
  if (distortsColour(evidence.qualityIssue) || (model && model.leavesFound > 0)) return true;
  return evidence.plantFraction >= MIN_PLANT_FRACTION;
}
