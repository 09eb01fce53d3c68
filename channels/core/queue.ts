import { randomUUID } from "node:crypto";
import { type JobsOptions, Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { Language } from "../../src/diagnosis/types.js";
import type { Routing } from "../../src/results/types.js";
import { COMPLETED_JOB_TTL_S, FAILED_JOB_TTL_S, JOB_ATTEMPTS } from "../limits.js";
import type { AnswerProgress } from "./answer-once.js";
import { createTurns, type Turns } from "./turns.js";
import type { InboundMessage } from "./types.js";

export const QUEUE_NAME = "channels";

/** A job's place among its farmer's jobs (turns.ts). */
interface Chained {
  /** The farmer key whose chain the job is in: a job put back after failing rejoins it there. */
  conversation?: string;
  /** The job of the same farmer queued just before it, when it was queued (the chain in Redis may move it). */
  after?: string;
  /** When an operator put the job back at the end of its chain (ms): a missing predecessor is waited for from then. */
  chainedAt?: number;
}

export type ChannelJob = Chained &
  (
    | (AnswerProgress & {
        kind: "inbound";
        message: InboundMessage;
        /** Set once the photo is diagnosed and stored, so a retry (say, after a failed send) does not diagnose again. */
        requestId?: string;
        /** The farmer was already told the photo arrived (a slow answer, a failed attempt): not twice. */
        noticeSent?: boolean;
      })
    | (AnswerProgress & { kind: "deliver"; requestId: string; routing: Routing; language: Language })
    /** An officer answered a stored result: send the answer where the farmer is. */
    | { kind: "answer"; requestId: string }
    /** Delete everything kept about the farmer `owner` (asked through the console), after their other jobs. */
    | { kind: "forget"; owner: string }
  );

export const JOB_OPTIONS: JobsOptions = {
  attempts: JOB_ATTEMPTS,
  // The waits of limits.ts RETRY_DELAYS_MS (the worker's backoff strategy).
  backoff: { type: "channel" },
  // Completed jobs stay a day so a webhook retried within it still finds its job id taken; bounded in count.
  removeOnComplete: { age: COMPLETED_JOB_TTL_S, count: 50_000 },
  // Failed jobs are kept for `npm run jobs` to list and retry, as long as results are: they hold the farmer's
  // number or chat id, their words and their photo's address, which may not outlive what is kept of them.
  removeOnFail: { age: FAILED_JOB_TTL_S },
};

// BullMQ job ids may not contain ":" nor be plain integers (Telegram's update ids are).
export function inboundJobId(message: Pick<InboundMessage, "provider" | "messageId">): string {
  return `${message.provider}_${message.messageId.replace(/:/g, "_")}`;
}

export function deliveryJobId(requestId: string): string {
  return `deliver_${requestId}`;
}

export function answerJobId(requestId: string): string {
  return `answer_${requestId}`;
}

export interface ChannelQueue {
  readonly queue: Queue<ChannelJob>;
  readonly turns: Turns;
  /**
   * Queues a job for a farmer (`conversation`: their farmer key), after their earlier ones: the worker
   * answers one farmer's jobs in the order they were queued. The same job id twice is one job.
   */
  enqueue(job: ChannelJob, options: { jobId: string; conversation?: string | undefined }): Promise<void>;
  /** Queues one inbound message; the same provider message id twice is one job. */
  enqueueInbound(message: InboundMessage): Promise<void>;
  enqueueDelivery(requestId: string, routing: Routing, language: Language): Promise<void>;
  /** An officer's answer for the farmer `owner` (the stored result's owner), after their other messages. */
  enqueueAnswer(requestId: string, owner?: string): Promise<void>;
  /** Deletes everything kept about the farmer `owner`, after their jobs queued so far (none can undo it). */
  enqueueForget(owner: string): Promise<void>;
  close(): Promise<void>;
}

export interface QueueDeps {
  connection: Redis;
  /** BullMQ key prefix: tests and deployments sharing one Redis use their own. */
  prefix?: string;
  /** The farmer key of a routed result's address (registry.routingOwner). */
  routingOwner(routing: Routing): string | undefined;
}

export function createChannelQueue({ connection, prefix = "bull", routingOwner }: QueueDeps): ChannelQueue {
  const queue = new Queue<ChannelJob>(QUEUE_NAME, { connection, prefix, defaultJobOptions: JOB_OPTIONS });
  // The connection's problems are logged by its owner (src/redis.ts); BullMQ re-emits them here and, with no
  // listener, prints each as a multi-line stack dump on stderr.
  queue.on("error", () => {});
  const turns = createTurns(connection, `${prefix}:${QUEUE_NAME}`);
  const enqueue: ChannelQueue["enqueue"] = async (job, { jobId, conversation }) => {
    const after = conversation ? await turns.claim(conversation, jobId) : undefined;
    await queue.add(
      job.kind,
      { ...job, ...(conversation ? { conversation } : {}), ...(after ? { after } : {}) },
      {
        jobId,
      },
    );
  };
  return {
    queue,
    turns,
    enqueue,
    enqueueInbound: (message) =>
      enqueue({ kind: "inbound", message }, { jobId: inboundJobId(message), conversation: message.owner }),
    enqueueDelivery: (requestId, routing, language) =>
      enqueue(
        { kind: "deliver", requestId, routing, language },
        { jobId: deliveryJobId(requestId), conversation: routingOwner(routing) },
      ),
    enqueueAnswer: (requestId, owner) =>
      enqueue({ kind: "answer", requestId }, { jobId: answerJobId(requestId), conversation: owner }),
    enqueueForget: (owner) =>
      enqueue({ kind: "forget", owner }, { jobId: `forget_${randomUUID()}`, conversation: owner }),
    close: () => queue.close(),
  };
}
