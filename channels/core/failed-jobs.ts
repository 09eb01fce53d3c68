import type { Job, Queue } from "bullmq";
import type { ChannelJob, ChannelQueue } from "./queue.js";
import type { Turns } from "./turns.js";

/** The queue and the farmers' chains its jobs are in. */
export type FailedJobs = Pick<ChannelQueue, "queue" | "turns">;

export interface FailedJobSummary {
  id: string;
  kind: ChannelJob["kind"];
  /** Provider and channel, never the phone number: the listing goes to terminals and tickets. */
  route: string;
  attempts: number;
  failedAt: string | null;
  reason: string;
}

function routeOf(data: ChannelJob): string {
  if (data.kind === "inbound") return `${data.message.provider}/${data.message.channel}`;
  return data.kind === "deliver" ? `deliver/${data.routing.channel}` : data.kind;
}

export async function listFailed(queue: Queue<ChannelJob>, limit = 100): Promise<FailedJobSummary[]> {
  const jobs = await queue.getFailed(0, limit - 1);
  return jobs.map((job) => ({
    id: job.id ?? "",
    kind: job.data.kind,
    route: routeOf(job.data),
    attempts: job.attemptsMade,
    failedAt: job.finishedOn ? new Date(job.finishedOn).toISOString() : null,
    reason: job.failedReason,
  }));
}

/**
 * Puts a failed job back with a fresh set of attempts, at the end of its farmer's chain (turns.ts): after
 * the farmer's jobs queued so far, before the ones that come next. Chained first, so a message arriving
 * meanwhile already goes after it.
 */
async function putBack(job: Job<ChannelJob>, turns: Turns): Promise<void> {
  const { conversation } = job.data;
  // The job's record of its predecessor follows (JSON drops an undefined one).
  if (conversation)
    await job.updateData({
      ...job.data,
      after: await turns.requeue(conversation, job.id!),
      chainedAt: Date.now(),
    });
  await job.retry("failed", { resetAttemptsMade: true, resetAttemptsStarted: true });
}

/** Puts one failed job back (putBack). False if no such failed job. */
export async function retryFailed({ queue, turns }: FailedJobs, id: string): Promise<boolean> {
  const job = await queue.getJob(id);
  if (!job || !(await job.isFailed())) return false;
  await putBack(job, turns);
  return true;
}

/**
 * Puts every failed job back (putBack), oldest failure first: a farmer's jobs failed in their order, so they
 * rejoin the chain in it. Returns how many went back.
 */
export async function retryAllFailed({ queue, turns }: FailedJobs): Promise<number> {
  let retried = 0;
  // Retried jobs leave the failed set, so the first page is always the next batch.
  for (
    let batch = await queue.getJobs(["failed"], 0, 99, true);
    batch.length > 0;
    batch = await queue.getJobs(["failed"], 0, 99, true)
  ) {
    for (const job of batch) await putBack(job, turns);
    retried += batch.length;
  }
  return retried;
}
