import { cropOfClass } from "./crops.js";
import type { Knowledge, NoteRequest } from "./kb.js";
import type { Crop } from "./types.js";

/** Probabilities over the leaf classes (non_plant left out), summing to 1. */
export type ClassProbabilities = Map<string, number>;

export const CROP_MISMATCH_NOTE = "crop_mismatch";

/** Below this share of the model's belief on the stated crop, the answer says the photo looks like another crop. */
export const CROP_MISMATCH_SHARE = 0.2;
/**
 * Weight kept by a disease whose organism is recorded absent from the stated region. Not zero: distribution
 * records lag behind new outbreaks, so a confident photo can still win against the table.
 */
export const ABSENT_IN_REGION_WEIGHT = 0.1;
/** A down-weighted disease is named in the note only if the model gave it at least this probability. */
const NOTABLE_PROBABILITY = 0.05;

export interface Narrowing {
  probabilities: ClassProbabilities;
  notes: NoteRequest[];
}

/** Translated names for the notes' parameters, in the answer's language. */
export interface Names {
  crop(crop: string): string;
  disease(classId: string): string;
}

function normalise(probabilities: ClassProbabilities): ClassProbabilities {
  let total = 0;
  for (const p of probabilities.values()) total += p;
  if (total <= 0) return probabilities;
  return new Map([...probabilities].map(([id, p]) => [id, p / total]));
}

/** Model crop with most probability, summing each crop's classes. */
export function likeliestCrop(probabilities: ClassProbabilities): { crop: Crop; share: number } | null {
  const shares = new Map<Crop, number>();
  for (const [id, p] of probabilities) {
    const crop = cropOfClass(id);
    if (crop) shares.set(crop, (shares.get(crop) ?? 0) + p);
  }
  let best: { crop: Crop; share: number } | null = null;
  for (const [crop, share] of shares) if (!best || share > best.share) best = { crop, share };
  return best;
}

/**
 * A stated crop restricts the answer to that crop's classes: the farmer knows the plant, the model only
 * guesses it. When the model puts little belief there, the answer keeps the restriction but says the photo
 * looks like another crop. (A crop the model does not cover never gets here: result.ts answers it apart.)
 */
export function narrowByCrop(probabilities: ClassProbabilities, crop: Crop, names: Names): Narrowing {
  const likeliest = likeliestCrop(probabilities);
  const detected = likeliest ? names.crop(likeliest.crop) : "";
  const kept = new Map([...probabilities].filter(([id]) => cropOfClass(id) === crop));
  let share = 0;
  for (const p of kept.values()) share += p;
  const notes: NoteRequest[] =
    share < CROP_MISMATCH_SHARE
      ? [{ key: CROP_MISMATCH_NOTE, params: { given: names.crop(crop), detected } }]
      : [];
  return { probabilities: normalise(kept), notes };
}

/** Diseases whose organism is absent from the stated region lose weight; unknown region text is said so. */
export function narrowByRegion(
  probabilities: ClassProbabilities,
  regionText: string,
  kb: Knowledge,
  names: Names,
): Narrowing {
  const region = kb.resolveRegion(regionText);
  if (!region)
    return { probabilities, notes: [{ key: "region_unknown", params: { region: regionText.trim() } }] };
  const excluded: string[] = [];
  const weighted = new Map(
    [...probabilities].map(([id, p]) => {
      const eppo = kb.isHealthy(id) ? null : kb.eppoCode(id);
      if (eppo && kb.presence(eppo, region.codes) === "absent") {
        if (p >= NOTABLE_PROBABILITY) excluded.push(id);
        return [id, p * ABSENT_IN_REGION_WEIGHT];
      }
      return [id, p];
    }),
  );
  const notes: NoteRequest[] =
    excluded.length > 0
      ? [
          {
            key: "region_narrowed",
            params: { region: region.label, excluded: excluded.map((id) => names.disease(id)).join(", ") },
          },
        ]
      : [];
  return { probabilities: normalise(weighted), notes };
}
