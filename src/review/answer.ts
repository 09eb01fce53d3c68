import type { Logger } from "pino";
import { isoWeek } from "../outbreaks/weeks.js";
import { countedDisease } from "../results/record.js";
import type { Records } from "../results/records.js";
import type { Decision, StoredResult } from "../results/types.js";
import type { LabelledExample } from "./examples.js";

export interface AnswerDeps {
  records: Records;
  isHealthy: (classId: string) => boolean;
  /** Queues the officer's answer to the farmer on the channel they used, after their other messages
   *  (absent without channels). */
  enqueueAnswer?: (requestId: string, owner?: string) => Promise<void>;
  logger?: Pick<Logger, "info" | "warn">;
}

export type AnswerOutcome =
  | { status: "not_claimed" | "gone" }
  /** Closed and saved, but its follow-up is still to be finished (by settleAnswers). */
  | { status: "settling" }
  | { status: "done"; stored: StoredResult; sent: boolean; kept: boolean };

/** Whether the farmer agreed to their photo being kept, and on what basis; undefined when they did not. */
async function consentOf(
  stored: StoredResult,
  records: Records,
): Promise<LabelledExample["consent"] | undefined> {
  const record = stored.owner ? await records.consent.get(stored.owner) : undefined;
  // A farmer's refusal stands, whatever a staff member ticked for one photo since.
  if (record?.status === "refused") return undefined;
  if (stored.consent) return stored.consent;
  if (!stored.owner || stored.source === "api" || stored.source === "console") return undefined;
  return record?.status === "informed" ? { basis: "informed_no_objection", at: record.at } : undefined;
}

/**
 * An officer's answer to a case they hold: recorded on the result, counted in the outbreak view under the
 * disease they named, kept as a labelled example when it names a class and the farmer agreed, and queued
 * for the farmer on the channel they used. The case closes first; when what follows fails part-way (Redis
 * refused a write), the answer stays unsettled and `settleAnswers` finishes it: `settling` says so.
 */
export async function answerCase(
  deps: AnswerDeps,
  requestId: string,
  decision: Decision,
): Promise<AnswerOutcome> {
  const status = await deps.records.reviews.decide(requestId, decision);
  if (status !== "done") return { status };
  try {
    if (await deps.records.reviews.leaseSettling(requestId)) {
      const settled = await settle(deps, requestId, decision);
      return settled ? { status: "done", ...settled } : { status: "gone" };
    }
  } catch (error) {
    deps.logger?.warn(
      { err: error, requestId },
      "officer's answer saved, its follow-up failed: retried later",
    );
  }
  return { status: "settling" };
}

/** Finishes every unsettled answer no other process is finishing (the API runs this every SETTLE_RETRY_MS). */
export async function settleAnswers(deps: AnswerDeps): Promise<number> {
  let done = 0;
  for (const { requestId, decision } of await deps.records.reviews.unsettled()) {
    if (!(await deps.records.reviews.leaseSettling(requestId))) continue;
    try {
      await settle(deps, requestId, decision);
      done++;
    } catch (error) {
      deps.logger?.warn({ err: error, requestId }, "officer's answer: follow-up failed again");
    }
  }
  return done;
}

/**
 * Everything an answer leads to, in an order that can be run again after a failure at any step: the decision
 * goes onto the result and the outbreak count moves once (a rerun finds the decision there and skips both);
 * the example, the farmer's latest result and the queued message (one job id per result) are the same however
 * often they are written. Undefined when the result has expired meanwhile.
 */
async function settle(
  deps: AnswerDeps,
  requestId: string,
  decision: Decision,
): Promise<Omit<Extract<AnswerOutcome, { status: "done" }>, "status"> | undefined> {
  const { records } = deps;
  const before = await records.store.get(requestId);
  if (!before) {
    await records.reviews.settled(requestId);
    return undefined;
  }
  let stored = before;
  if (!before.review?.decision) {
    await records.store.setState(requestId, "decision", decision);
    stored = (await records.store.get(requestId)) ?? before;
    const was = countedDisease(before, deps.isHealthy);
    const now = countedDisease(stored, deps.isHealthy);
    if (was !== now) {
      const week = isoWeek(new Date(stored.createdAt));
      const region = stored.region ?? "unknown";
      if (was) await records.outbreaks.add(week, region, was, -1);
      if (now) await records.outbreaks.add(week, region, now, 1);
    }
  }

  let kept = false;
  const consent = await consentOf(stored, records);
  const photo = decision.classId && consent ? await records.photos.get(requestId) : undefined;
  if (decision.classId && consent && photo) {
    await records.examples.save(
      {
        id: requestId,
        code: stored.code,
        label: decision.classId,
        source: stored.source ?? "api",
        region: stored.region ?? "unknown",
        takenAt: stored.createdAt,
        decision: decision.kind,
        officer: decision.officer,
        decidedAt: decision.at,
        consent,
        modelOutcome: stored.result.outcome,
        ...(stored.result.candidates[0] ? { modelTop: stored.result.candidates[0].id } : {}),
      },
      photo,
      stored.owner,
    );
    kept = true;
    // A refusal that came while this answer was being made: its deletion may have run before this save.
    if (stored.owner && (await records.consent.get(stored.owner))?.status === "refused") {
      await records.examples.delete(requestId);
      kept = false;
    }
  }

  // The officer's answer is now the farmer's latest: "my last diagnosis" (USSD) gives it, also for a photo the
  // model could not answer.
  if (stored.owner) await records.store.setLast(stored.owner, requestId);
  const reachable = stored.replyTo !== undefined || stored.routing !== undefined;
  if (reachable && deps.enqueueAnswer) await deps.enqueueAnswer(requestId, stored.owner);
  await records.reviews.settled(requestId);
  deps.logger?.info({ requestId, kind: decision.kind, kept, sent: reachable }, "officer answered a case");
  return { stored, sent: reachable && deps.enqueueAnswer !== undefined, kept };
}
