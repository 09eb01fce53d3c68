import type { Redis } from "ioredis";
import { createOutbreakCounts, type OutbreakCounts } from "../outbreaks/counts.js";
import { type ConsentStore, createConsentStore } from "../review/consent.js";
import { createExampleStore, type ExampleStore } from "../review/examples.js";
import { createReviewQueue, type ReviewQueue } from "../review/queue.js";
import { createForgetRequests, type ForgetRequests } from "./forget.js";
import { createPhotoStore, type PhotoStore } from "./photos.js";
import { createRecorder, type Recorder } from "./record.js";
import { createSentLog, type SentLog } from "./sent-log.js";
import { createResultStore, type ResultStore } from "./store.js";

/** Everything kept about diagnoses, in Redis when there is one (shared by API and workers), else in memory. */
export interface Records {
  store: ResultStore;
  photos: PhotoStore;
  reviews: ReviewQueue;
  outbreaks: OutbreakCounts;
  examples: ExampleStore;
  consent: ConsentStore;
  record: Recorder;
  sent: SentLog;
  /** A farmer's first ask to delete everything about them, waiting for their second. */
  forgetRequests: ForgetRequests;
}

export function createRecords(redis: Redis | undefined, options: { prefix?: string } = {}): Records {
  const store = createResultStore(redis, options);
  const photos = createPhotoStore(redis, options);
  const reviews = createReviewQueue(store, redis, options);
  const outbreaks = createOutbreakCounts(redis, options);
  return {
    store,
    photos,
    reviews,
    outbreaks,
    examples: createExampleStore(redis, options),
    consent: createConsentStore(redis, options),
    record: createRecorder({ store, photos, reviews, outbreaks }),
    sent: createSentLog(redis, options),
    forgetRequests: createForgetRequests(redis, options),
  };
}
