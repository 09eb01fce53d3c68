import { type Job, type Queue, UnrecoverableError, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { errorChain } from "../../src/logger.js";
import { repeatingErrorLog } from "../../src/redis.js";
import { type HandlerDeps, handleAnswer, handleDelivery, handleInbound } from "./handlers.js";
import { type ChannelJob, QUEUE_NAME } from "./queue.js";
import { loggingSends } from "./sent-log.js";
import { PermanentJobError, ProviderRateLimitError } from "./types.js";

/**
 * BullMQ only reads the queue's rate-limit key (which a provider's 429 sets through queue.rateLimit) in a
 * worker that has a limiter. This one is far above what the workers can do, so it never throttles by itself:
 * each job waits on a download, a diagnosis or a provider, and providers allow tens of sends a second.
 */
export const WORKER_LIMITER = { max: 1_000, duration: 1_000 };

export interface WorkerDeps extends HandlerDeps {
  connection: Redis;
  /** The queue the jobs come from: a provider's 429 pauses it for every worker. */
  queue: Pick<Queue<ChannelJob>, "rateLimit">;
  prefix?: string;
  /** Jobs in flight per process: each waits mostly on a download or a send, the core has its own pool. */
  concurrency?: number;
  /** How long a job's lock lives without renewal: a crashed worker's jobs are taken over after it. */
  lockDuration?: number;
  stalledInterval?: number;
}

export function createChannelWorker(deps: WorkerDeps): Worker<ChannelJob> {
  const {
    connection,
    queue,
    prefix = "bull",
    concurrency = 4,
    lockDuration = 30_000,
    stalledInterval,
    logger,
  } = deps;

  // Every send is written to the farmer's delivery log, which the console's look-up shows.
  const handlerDeps: HandlerDeps = { ...deps, adapters: loggingSends(deps.adapters, deps.records.sent) };

  async function process(job: Job<ChannelJob>): Promise<void> {
    const data = job.data;
    if (data.kind === "deliver")
      return handleDelivery(data.requestId, data.routing, data.language, handlerDeps);
    if (data.kind === "answer") return handleAnswer(data.requestId, handlerDeps);
    return handleInbound(data.message, data.requestId, handlerDeps, (requestId) =>
      job.updateData({ ...data, requestId }),
    );
  }

  const worker: Worker<ChannelJob> = new Worker<ChannelJob>(
    QUEUE_NAME,
    async (job) => {
      const started = performance.now();
      try {
        await process(job);
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
      ...(stalledInterval ? { stalledInterval } : {}),
    },
  );
  worker.on("failed", (job, error) => {
    logger.warn({ jobId: job?.id, attempts: job?.attemptsMade, err: errorChain(error) }, "job failed");
  });
  // With Redis down BullMQ reports every reconnect attempt here.
  worker.on("error", repeatingErrorLog(logger, "worker error"));
  return worker;
}
