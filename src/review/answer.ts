import type { Logger } from "pino";
import { SETTLE_AFTER_MS } from "../limits.js";
import { isoWeek } from "../outbreaks/weeks.js";
import { countedDisease, decidedDisease } from "../results/record.js";
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

/** What a settled answer led to. */
type Settled = Omit<Extract<AnswerOutcome, { status: "done" }>, "status">;

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
  const settled = await settleLeased(
    deps,
    requestId,
    decision,
    "officer's answer saved, its follow-up failed: retried later",
  );
  if (settled === "held" || settled === "failed") return { status: "settling" };
  return settled ? { status: "done", ...settled } : { status: "gone" };
}

/**
 * Finishes the unsettled answers no other process is finishing, but for those younger than SETTLE_AFTER_MS,
 * which the request that made them is still finishing. The API runs it every SETTLE_RETRY_MS.
 */
export async function settleAnswers(deps: AnswerDeps, now = Date.now()): Promise<number> {
  let done = 0;
  for (const { requestId, decision } of await deps.records.reviews.unsettled()) {
    if (now - Date.parse(decision.at) < SETTLE_AFTER_MS) continue;
    const settled = await settleLeased(deps, requestId, decision, "officer's answer: follow-up failed again");
    if (settled !== "held" && settled !== "failed") done++;
  }
  return done;
}

/**
 * `settle` under the answer's lease: "held" while another process holds it; "failed" when a step failed (logged
 * with `failure`, and the lease given back at once so the next round takes it up).
 */
async function settleLeased(
  deps: AnswerDeps,
  requestId: string,
  decision: Decision,
  failure: string,
): Promise<Settled | undefined | "held" | "failed"> {
  const { reviews } = deps.records;
  const token = await reviews.leaseSettling(requestId);
  if (!token) return "held";
  try {
    return await settle(deps, requestId, decision, token);
  } catch (error) {
    deps.logger?.warn({ err: error, requestId }, failure);
    await reviews.releaseSettling(requestId, token).catch(() => {});
    return "failed";
  }
}

/** The result as the model left it, before any officer's decision. */
function asTheModelLeftIt(stored: StoredResult): StoredResult {
  if (!stored.review?.decision) return stored;
  const { decision: _, ...review } = stored.review;
  return { ...stored, review };
}

/**
 * Everything an answer leads to, in an order that can be run again after a failure at any step: the outbreak
 * count moves once per result (outbreaks.moveOnce), and the decision on the result, the example, the farmer's
 * latest result and the queued message (one job id per result) are the same however often they are written.
 * Undefined when the result has expired meanwhile.
 */
async function settle(
  deps: AnswerDeps,
  requestId: string,
  decision: Decision,
  token: string,
): Promise<Settled | undefined> {
  const { records } = deps;
  const current = await records.store.get(requestId);
  if (!current) {
    await records.reviews.settled(requestId, token);
    return undefined;
  }
  const from = countedDisease(asTheModelLeftIt(current), deps.isHealthy);
  const to = decidedDisease(decision, deps.isHealthy);
  if (from !== to) {
    const move = { ...(from ? { from } : {}), ...(to ? { to } : {}) };
    const week = isoWeek(new Date(current.createdAt));
    await records.outbreaks.moveOnce(week, current.region ?? "unknown", move, requestId);
  }
  await records.store.setState(requestId, "decision", decision);
  const stored = (await records.store.get(requestId)) ?? current;

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
    // A refusal, or the farmer's data deleted, while this answer was being made: that deletion may have run
    // before this save.
    const refused = stored.owner && (await records.consent.get(stored.owner))?.status === "refused";
    if (refused || !(await records.store.get(requestId))) {
      await records.examples.delete(requestId);
      kept = false;
    }
  }

  // The officer's answer is now the farmer's latest: "my last diagnosis" (USSD) gives it, also for a photo the
  // model could not answer (not for a result deleted meanwhile).
  if (stored.owner && (await records.store.get(requestId)))
    await records.store.setLast(stored.owner, requestId);
  const reachable = stored.replyTo !== undefined || stored.routing !== undefined;
  if (reachable && deps.enqueueAnswer) await deps.enqueueAnswer(requestId, stored.owner);
  await records.reviews.settled(requestId, token);
  deps.logger?.info({ requestId, kind: decision.kind, kept, sent: reachable }, "officer answered a case");
  return { stored, sent: reachable && deps.enqueueAnswer !== undefined, kept };
}
