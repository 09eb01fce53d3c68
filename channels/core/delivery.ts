import type { Language } from "../../src/diagnosis/types.js";
import type { Routing } from "../../src/results/types.js";
import { type AnswerProgress, answerOnce, type SaveProgress } from "./answer-once.js";
import { conversation } from "./conversation.js";
import type { HandlerDeps } from "./deps.js";
import { adapterFor } from "./registry.js";
import { PermanentJobError } from "./types.js";

/** A REST result whose user_data routes it to a farmer: sent at farmer level, in the request's language. */
export async function handleDelivery(
  job: AnswerProgress & { requestId: string; routing: Routing; language: Language },
  save: SaveProgress<AnswerProgress>,
  deps: HandlerDeps,
): Promise<void> {
  const { requestId, routing, language } = job;
  const destination = deps.destination(routing);
  if (!destination) throw new PermanentJobError(`no provider configured to send on ${routing.channel}`);
  const { provider, channel, to } = destination;
  if (!to) throw new PermanentJobError(`routing for ${routing.channel} lacks its address`);
  const stored = await deps.records.store.get(requestId);
  if (!stored) throw new PermanentJobError("routed result is no longer stored");
  const adapter = adapterFor(deps.adapters, provider);
  const talk = conversation({ provider, channel, to }, adapter, language, deps);
  await answerOnce(talk, stored, job, save, deps);
}
