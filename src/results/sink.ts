import type { Logger } from "pino";
import type { Language } from "../diagnosis/types.js";
import type { Recorder } from "./record.js";
import type { ResultSink, Routing } from "./types.js";

export interface SinkDeps {
  record: Recorder;
  /** Present when channels run (Redis + a provider): queues the routed result's delivery to the farmer. */
  enqueueDelivery?: (requestId: string, routing: Routing, language: Language) => Promise<void>;
  /** The routing channels some configured provider sends on (channels/core/registry.ts); all, when absent. */
  deliverable?: ReadonlySet<Routing["channel"]>;
  /** Told when a partner asks for a delivery nobody can make: the HTTP response cannot say so. */
  logger?: Pick<Logger, "warn">;
  /** Whose result a routed one is, on the keys the channels use (channels/core/registry.ts routingOwner). */
  ownerOf?: (routing: Routing) => string | undefined;
}

export function createResultSink({
  record,
  enqueueDelivery,
  deliverable,
  logger,
  ownerOf,
}: SinkDeps): ResultSink {
  return async (result, { routing, ...submission }) => {
    const owner = routing ? ownerOf?.(routing) : undefined;
    await record(result, { ...submission, ...(owner ? { owner } : {}), ...(routing ? { routing } : {}) });
    if (!routing) return;
    if (enqueueDelivery && (!deliverable || deliverable.has(routing.channel))) {
      await enqueueDelivery(result.request_id, routing, submission.language);
      return;
    }
    // A job queued here would fail in every worker; the result stays stored, so USSD and SMS still find it.
    logger?.warn(
      { requestId: result.request_id, channel: routing.channel },
      "user_data routes the result to a channel that is not configured: stored, not sent",
    );
  };
}
