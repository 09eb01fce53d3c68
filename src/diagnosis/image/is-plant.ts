import type { QualityIssue } from "../types.js";
import { distortsColour } from "./quality.js";

/**
 * Below this leaf-coloured share a photo shows no plant (documents, grey objects, most animals and objects).
 * Chosen on the validation split (89 non-plant, 976 leaf photos): with the first model, the veto cut false
 * accepts from 56 % to 36 % while false rejects rose from 1.0 % to 1.1 %.
 */
export const MIN_PLANT_FRACTION = 0.08;

export interface PlantEvidence {
  /** The model's calibrated `non_plant` probability, or null without a model. */
  nonPlantProbability: number | null;
  /** The model's `non_plant_threshold` from classes.json (chosen by the training on validation photos). */
  nonPlantThreshold: number;
  plantFraction: number;
  qualityIssue: QualityIssue | null;
}

/**
 * The rule: not a plant when the model says `non_plant` with at least its threshold probability, OR when the
 * photo has (almost) no leaf colour. Either veto suffices. The model knows animals, objects and people, but a
 * document or a plain grey object is far from anything it was trained on and may get any answer; colour catches
 * those. Colour never overrides the model the other way: grass behind a dog is green. In a photo too dark,
 * colour says nothing and only the model decides; without a model, only colour does.
 */
export function isPlant(evidence: PlantEvidence): boolean {
  if (evidence.nonPlantProbability !== null && evidence.nonPlantProbability >= evidence.nonPlantThreshold)
    return false;
  if (distortsColour(evidence.qualityIssue)) return true;
  return evidence.plantFraction >= MIN_PLANT_FRACTION;
}
