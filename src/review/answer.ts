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
 * for the farmer on the channel they used.
 */
export async function answerCase(
  deps: AnswerDeps,
  requestId: string,
  decision: Decision,
): Promise<AnswerOutcome> {
  const { records } = deps;
  const before = await records.store.get(requestId);
  if (!before) return { status: "gone" };
  const status = await records.reviews.decide(requestId, decision);
  if (status !== "done") return { status };
  const stored = (await records.store.get(requestId)) ?? before;

  const was = countedDisease(before, deps.isHealthy);
  const now = countedDisease(stored, deps.isHealthy);
  if (was !== now) {
    const week = isoWeek(new Date(stored.createdAt));
    const region = stored.region ?? "unknown";
    if (was) await records.outbreaks.add(week, region, was, -1);
    if (now) await records.outbreaks.add(week, region, now, 1);
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
  deps.logger?.info({ requestId, kind: decision.kind, kept, sent: reachable }, "officer answered a case");
  return { status: "done", stored, sent: reachable && deps.enqueueAnswer !== undefined, kept };
}
