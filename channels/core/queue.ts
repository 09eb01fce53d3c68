import { type JobsOptions, Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { Language } from "../../src/diagnosis/types.js";
import type { Routing } from "../../src/results/types.js";
import type { InboundMessage } from "./types.js";

export const QUEUE_NAME = "channels";

export type ChannelJob =
  | {
      kind: "inbound";
      message: InboundMessage;
      /** Set once the photo is diagnosed and stored, so a retry (say, after a failed send) does not diagnose again. */
      requestId?: string;
    }
  | { kind: "deliver"; requestId: string; routing: Routing; language: Language }
  /** An officer answered a stored result: send the answer where the farmer is. */
  | { kind: "answer"; requestId: string };

export const JOB_OPTIONS: JobsOptions = {
  attempts: 6,
  // 2 s, 4 s, 8 s ... about a minute in all: covers a provider's brief outage without hammering it.
  backoff: { type: "exponential", delay: 2_000 },
  // Completed jobs stay a day so a webhook retried within it still finds its job id taken; bounded in count.
  removeOnComplete: { age: 24 * 3600, count: 50_000 },
  // Failed jobs are kept for `npm run jobs` to list and retry.
  removeOnFail: false,
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
  /** Enqueues one inbound message; the same provider message id twice is one job. */
  enqueueInbound(message: InboundMessage): Promise<void>;
  enqueueDelivery(requestId: string, routing: Routing, language: Language): Promise<void>;
  enqueueAnswer(requestId: string): Promise<void>;
  close(): Promise<void>;
}

export interface QueueDeps {
  connection: Redis;

  /** BullMQ key prefix: tests and deployments sharing one Redis use their own. */
  prefix?: string;
}

export function createChannelQueue({ connection, prefix = "bull" }: QueueDeps): ChannelQueue {
  const queue = new Queue<ChannelJob>(QUEUE_NAME, { connection, prefix, defaultJobOptions: JOB_OPTIONS });
  // The connection's problems are logged by its owner (src/redis.ts); BullMQ re-emits them here and, with no
  // listener, prints each as a multi-line stack dump on stderr.
  queue.on("error", () => {});
  return {
    queue,
    async enqueueInbound(message) {
      await queue.add("inbound", { kind: "inbound", message }, { jobId: inboundJobId(message) });
    },
    async enqueueDelivery(requestId, routing, language) {
      await queue.add(
        "deliver",
        { kind: "deliver", requestId, routing, language },
        { jobId: deliveryJobId(requestId) },
      );
    },
    async enqueueAnswer(requestId) {
      await queue.add("answer", { kind: "answer", requestId }, { jobId: answerJobId(requestId) });
    },
    close: () => queue.close(),
  };
}
