import type { StoredResult } from "../../src/results/types.js";
import type { Conversation } from "./conversation.js";
import type { HandlerDeps } from "./deps.js";

/**
 * What of an answer a job has already sent. A send after the answer can fail (a provider's 429 on the
 * "did this help?" that follows it, a brief outage) and the queue then runs the job again: the farmer must not
 * get the same diagnosis twice, billed again on SMS.
 */
export interface AnswerProgress {
  resultSent?: boolean;
  feedbackAsked?: boolean;
}

/** Records progress in the job, so a retry picks up where the last attempt stopped. */
export type SaveProgress<T> = (update: Partial<T>) => Promise<void>;

/** The result, then "did this help?", each sent once across the job's attempts. */
export async function answerOnce(
  talk: Conversation,
  stored: StoredResult,
  sent: AnswerProgress,
  save: SaveProgress<AnswerProgress>,
  deps: Pick<HandlerDeps, "expertLoop" | "records">,
): Promise<void> {
  if (!sent.resultSent) {
    await talk.result(stored);
    await save({ resultSent: true });
    // A "2" alone then asks for this answer's treatment.
    if (stored.owner) await deps.records.store.setShown(stored.owner, stored.result.request_id);
  }
  if (deps.expertLoop && !sent.feedbackAsked) {
    await deps.expertLoop.afterAnswer(talk, stored);
    await save({ feedbackAsked: true });
  }
}
