import { DelayedError, type Job, type Queue, UnrecoverableError, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { errorChain } from "../../src/logger.js";
import { repeatingErrorLog } from "../../src/redis.js";
import { JOB_ATTEMPTS, RETRY_DELAYS_MS, TURN_MISSING_WAIT_MS, TURN_RECHECK_MS } from "../limits.js";
import { handleDelivery } from "./delivery.js";
import type { HandlerDeps } from "./deps.js";
import { handleForget } from "./forget-command.js";
import { handleInbound, type SaveJob, tellAboutFailure } from "./inbound.js";
import { handleAnswer } from "./officer-answer.js";
import { type ChannelJob, QUEUE_NAME } from "./queue.js";
import { windowedSends } from "./reply-window.js";
import { loggingSends } from "./sent-log.js";
import type { Turns } from "./turns.js";
import { PermanentJobError, ProviderRateLimitError } from "./types.js";

/**
 * BullMQ only reads the queue's rate-limit key (which a provider's 429 sets through queue.rateLimit) in a
 * worker that has a limiter. This one is far above what the workers can do, so it never throttles by itself:
 * each job waits on a download, a diagnosis or a provider, and providers allow tens of sends a second.
 */
export const WORKER_LIMITER = { max: 1_000, duration: 1_000 };

export interface WorkerDeps extends HandlerDeps {
  connection: Redis;
  /** The queue the jobs come from: a provider's 429 pauses it for every worker; its turns order each farmer's jobs. */
  queue: Pick<Queue<ChannelJob>, "rateLimit" | "getJobState" | "getJob">;
  turns: Turns;
  prefix?: string;
  /** Jobs in flight per process: each waits mostly on a download or a send, the core has its own pool. */
  concurrency?: number;
  /** How long a job's lock lives without renewal: a crashed worker's jobs are taken over after it. */
  lockDuration?: number;
  stalledInterval?: number;
  /** How long a job waits for a chained predecessor that is not in the queue (TURN_MISSING_WAIT_MS). */
  missingWaitMs?: number;
}

/** A job whose predecessor is finished for good may run. */
const FINISHED = new Set(["completed", "failed"]);

/** The wait before attempt `attemptsMade + 1` (limits.ts RETRY_DELAYS_MS). */
function retryDelay(attemptsMade: number): number {
  return RETRY_DELAYS_MS[Math.min(attemptsMade, RETRY_DELAYS_MS.length) - 1] ?? RETRY_DELAYS_MS[0];
}

export function createChannelWorker(deps: WorkerDeps): Worker<ChannelJob> {
  const {
    connection,
    queue,
    turns,
    prefix = "bull",
    concurrency = 4,
    lockDuration = 30_000,
    stalledInterval,
    missingWaitMs = TURN_MISSING_WAIT_MS,
    logger,
  } = deps;

  // Every send is written to the farmer's delivery log, which the console's look-up shows; one outside its
  // channel's reply window is kept for the farmer's next message.
  const handlerDeps: HandlerDeps = {
    ...deps,
    adapters: windowedSends(loggingSends(deps.adapters, deps.records.sent, deps.farmerKey), {
      windows: deps.windows,
      log: deps.records.sent,
      farmerKey: deps.farmerKey,
      // A farmer key that is a phone number says the country's language when they picked none.
      languageOf: (owner) => deps.languages.resolve(owner, owner.startsWith("+") ? { phone: owner } : {}),
      logger,
    }),
  };

  /** False when an earlier job of the same farmer is still open: this one then sleeps until woken. */
  async function myTurn(job: Job<ChannelJob>, token: string | undefined): Promise<boolean> {
    // The chain as it stands now (a job put back by an operator moves); the job's own record if it expired.
    const linked = await turns.after(job.id!);
    const after = linked === null ? job.data.after : linked;
    if (!after) return true;
    // Registered before looking, so a predecessor ending in between still wakes this job.
    await turns.wait(after, job.id!);
    if (await predecessorDone(job, after)) return true;
    await job.moveToDelayed(Date.now() + TURN_RECHECK_MS, token);
    return false;
  }

  async function predecessorDone(job: Job<ChannelJob>, after: string): Promise<boolean> {
    const state = await queue.getJobState(after);
    if (FINISHED.has(state)) return true;
    if (state !== "unknown") return false;
    // Not in the queue: completed and removed since, or chained by a webhook whose job has not landed yet
    // (or never will: a webhook answered 503 that its provider does not deliver again).
    if (await turns.finished(after)) return true;
    if (Date.now() - Math.max(job.timestamp, job.data.chainedAt ?? 0) < missingWaitMs) return false;
    logger.warn(
      { jobId: job.id, after },
      "the job before this one never reached the queue; running without it",
    );
    return true;
  }

  /** The job waiting for this one (its farmer's next message) runs now instead of at its next look. */
  async function wakeNext(job: Job<ChannelJob> | undefined) {
    const next = job?.id ? await turns.waiter(job.id) : undefined;
    if (!next) return;
    const waiting = await queue.getJob(next);
    if (waiting && (await waiting.isDelayed())) await waiting.promote().catch(() => {});
  }

  async function process(job: Job<ChannelJob>): Promise<void> {
    const data = job.data;
    const save: SaveJob = (update) => job.updateData({ ...job.data, ...update } as ChannelJob);
    if (data.kind === "deliver") return handleDelivery(data, save, handlerDeps);
    if (data.kind === "answer") return handleAnswer(data.requestId, handlerDeps);
    if (data.kind === "forget") return handleForget(data.owner, handlerDeps);
    try {
      await handleInbound(data, save, handlerDeps);
    } catch (error) {
      const retried = !(error instanceof ProviderRateLimitError || error instanceof PermanentJobError);
      if (retried) {
        const final = job.attemptsMade + 1 >= (job.opts.attempts ?? JOB_ATTEMPTS);
        await tellAboutFailure(job.data as typeof data, final, save, handlerDeps);
      }
      throw error;
    }
  }

  const worker: Worker<ChannelJob> = new Worker<ChannelJob>(
    QUEUE_NAME,
    async (job, token) => {
      if (!(await myTurn(job, token))) throw new DelayedError();
      const started = performance.now();
      try {
        await process(job);
        await turns.finish(job.id!);
        logger.info(
          { jobId: job.id, kind: job.data.kind, ms: Math.round(performance.now() - started) },
          "job done",
        );
      } catch (error) {
        if (error instanceof ProviderRateLimitError) {
          // The provider asked us to slow down: pause the queue for every worker, and put this job back to
          // wait without using an attempt.
          logger.warn(
            { jobId: job.id, provider: error.provider, retryAfterMs: error.retryAfterMs },
            "provider rate limit",
          );
          await queue.rateLimit(error.retryAfterMs);
          throw Worker.RateLimitError();
        }
        if (error instanceof PermanentJobError) throw new UnrecoverableError(error.message);
        throw error;
      }
    },
    {
      connection,
      prefix,
      concurrency,
      limiter: WORKER_LIMITER,
      lockDuration,
      settings: { backoffStrategy: retryDelay },
      ...(stalledInterval ? { stalledInterval } : {}),
    },
  );
  worker.on("completed", (job) => void wakeNext(job).catch(() => {}));
  worker.on("failed", (job, error) => {
    // BullMQ sets finishedOn when the job failed for good, and the wait before the next try otherwise.
    if (job && typeof job.finishedOn === "number") {
      // Kept in the failed set: `npm run jobs` lists it and puts it back.
      logger.error(
        { jobId: job.id, attempts: job.attemptsMade, err: errorChain(error) },
        "job failed for good, kept for npm run jobs",
      );
      void wakeNext(job).catch(() => {});
    } else {
      logger.warn(
        { jobId: job?.id, attempt: job?.attemptsMade, retryInMs: job?.delay, err: errorChain(error) },
        "job attempt failed, will retry",
      );
    }
  });
  // With Redis down BullMQ reports every reconnect attempt here.
  worker.on("error", repeatingErrorLog(logger, "worker error"));
  return worker;
}
