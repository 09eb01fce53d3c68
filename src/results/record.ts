import type { Logger } from "pino";
import type { DiagnosisResult } from "../diagnosis/types.js";
import { LOW_CONFIDENCE } from "../limits.js";
import type { OutbreakCounts } from "../outbreaks/counts.js";
import { isoWeek } from "../outbreaks/weeks.js";
import type { ReviewQueue } from "../review/queue.js";
import { type PhotoStore, preparePhoto } from "./photos.js";
import { regionOf } from "./region.js";
import type { ResultStore } from "./store.js";
import type { Decision, ReturnAddress, ReviewReason, StoredResult, Submission } from "./types.js";

export interface RecordInput extends Submission {
  owner?: string;
  replyTo?: ReturnAddress;
}

export interface RecorderDeps {
  store: ResultStore;
  photos: PhotoStore;
  reviews: ReviewQueue;
  outbreaks: OutbreakCounts;
  logger?: Pick<Logger, "warn">;
}

/** Why a result needs an officer, or undefined when the model's answer can stand. */
export function reviewReason(result: DiagnosisResult): ReviewReason | undefined {
  if (result.outcome === "unsure") return "unsure";
  if (result.outcome === "crop_not_supported") return "crop_not_supported";
  const top = result.diagnoses[0];
  if (result.outcome === "diagnosed" && top && top.confidence < LOW_CONFIDENCE) return "low_confidence";
  return undefined;
}

/**
 * Whether a REST upload's photo is kept: only when someone may look at it, an officer now (the result goes to
 * the review queue) or later (a result routed to a farmer asks "did this help?", and "wrong" queues it).
 * Keeping a photo costs more CPU than diagnosing it (decode, shrink, JPEG: `npm run bench`), so a confident
 * answer that stays with the partner keeps none.
 */
export function keepsApiPhoto(result: DiagnosisResult, routed: boolean): boolean {
  return routed || reviewReason(result) !== undefined;
}

/** The disease a result counts for in the outbreak view: the officer's class, else the model's diagnosis. */
export function countedDisease(
  stored: StoredResult,
  isHealthy: (classId: string) => boolean,
): string | undefined {
  const decided = stored.review?.decision;
  if (decided) return decidedDisease(decided, isHealthy);
  return stored.result.outcome === "diagnosed" ? stored.result.diagnoses[0]?.id : undefined;
}

/** The disease an officer's decision counts under: the class they named, unless it is a healthy one. */
export function decidedDisease(
  decision: Decision,
  isHealthy: (classId: string) => boolean,
): string | undefined {
  return decision.classId && !isHealthy(decision.classId) ? decision.classId : undefined;
}

export type Recorder = (result: DiagnosisResult, input: RecordInput) => Promise<StoredResult>;

/**
 * Every diagnosis, from the API, the console or a channel, is kept the same way: the result with where it
 * came from, its photo (same 30 days), a review case when the model could not answer well, and its count
 * in the outbreak view.
 */
export function createRecorder({ store, photos, reviews, outbreaks }: RecorderDeps): Recorder {
  return async (result, input) => {
    const { photo, language, owner, ...meta } = input;
    const region = regionOf(meta.region, owner);
    const stored = await store.save({
      result,
      language,
      ...(owner ? { owner } : {}),
      ...meta,
      ...(meta.region ? { regionText: meta.region } : {}),
      region,
      photo: photo !== undefined,
    });
    if (photo)
      await photos.save(result.request_id, await (Buffer.isBuffer(photo) ? preparePhoto(photo) : photo));
    const reason = reviewReason(result);
    if (reason) await reviews.add(stored, reason);
    const disease = result.outcome === "diagnosed" ? result.diagnoses[0]?.id : undefined;
    if (disease) await outbreaks.add(isoWeek(new Date(stored.createdAt)), region, disease, 1);
    return reason ? ((await store.get(result.request_id)) ?? stored) : stored;
  };
}
