import type { Language } from "../../src/diagnosis/types.js";
import type { Routing } from "../../src/results/types.js";
import { conversation } from "./conversation.js";
import type { HandlerDeps } from "./deps.js";
import { adapterFor } from "./registry.js";
import { PermanentJobError } from "./types.js";

/** A REST result whose user_data routes it to a farmer: sent at farmer level, in the request's language. */
export async function handleDelivery(
  requestId: string,
  routing: Routing,
  language: Language,
  deps: HandlerDeps,
): Promise<void> {
  const destination = deps.destination(routing);
  if (!destination) throw new PermanentJobError(`no provider configured to send on ${routing.channel}`);
  const { provider, channel, to } = destination;
  if (!to) throw new PermanentJobError(`routing for ${routing.channel} lacks its address`);
  const stored = await deps.records.store.get(requestId);
  if (!stored) throw new PermanentJobError("routed result is no longer stored");
  const adapter = adapterFor(deps.adapters, provider);
  const talk = conversation({ provider, channel, to }, adapter, language, deps);
  await talk.result(stored);
  await deps.expertLoop?.afterAnswer(talk, stored);
}
