import type { Queue } from "bullmq";
import type { ChannelJob } from "./queue.js";

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
  return data.kind === "deliver" ? `deliver/${data.routing.channel}` : "answer";
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

/** Moves one failed job back to waiting, with a fresh set of attempts. False if no such failed job. */
export async function retryFailed(queue: Queue<ChannelJob>, id: string): Promise<boolean> {
  const job = await queue.getJob(id);
  if (!job || !(await job.isFailed())) return false;
  await job.retry("failed", { resetAttemptsMade: true, resetAttemptsStarted: true });
  return true;
}

/** Retries every failed job, each with a fresh set of attempts; returns how many went back to waiting. */
export async function retryAllFailed(queue: Queue<ChannelJob>): Promise<number> {
  let retried = 0;
  // Retried jobs leave the failed set, so the first page is always the next batch.
  for (let batch = await queue.getFailed(0, 99); batch.length > 0; batch = await queue.getFailed(0, 99)) {
    for (const job of batch)
      await job.retry("failed", { resetAttemptsMade: true, resetAttemptsStarted: true });
    retried += batch.length;
  }
  return retried;
}
