import type { Language } from "../diagnosis/types.js";
import type { ResultStore } from "./store.js";
import type { ResultSink, Routing } from "./types.js";

export interface SinkDeps {
  store: ResultStore;
  /** Present when channels run (Redis + a provider): queues the routed result's delivery to the farmer. */
  enqueueDelivery?: (requestId: string, routing: Routing, language: Language) => Promise<void>;
}

/** Whose result this is, on the keys the channels use: the phone number, or `tg:<chat id>`. */
export function routingOwner(routing: Routing): string | undefined {
  if (routing.channel === "telegram") return routing.chatId ? `tg:${routing.chatId}` : undefined;
  return routing.phone;
}

export function createResultSink({ store, enqueueDelivery }: SinkDeps): ResultSink {
  return async (result, language, routing) => {
    const owner = routing ? routingOwner(routing) : undefined;
    await store.save({ result, language, ...(owner ? { owner } : {}) });
    if (routing && enqueueDelivery) await enqueueDelivery(result.request_id, routing, language);
  };
}
