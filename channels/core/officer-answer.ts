import type { StoredResult } from "../../src/results/types.js";
import type { Target } from "./conversation.js";
import type { HandlerDeps } from "./deps.js";
import { adapterFor } from "./registry.js";
import { answerViewOf } from "./render/answer.js";
import { PermanentJobError } from "./types.js";

/** Where the farmer is: the conversation the photo came from, else the REST request's routing keys. */
function returnAddressOf(stored: StoredResult, deps: HandlerDeps): Target | undefined {
  const back = stored.replyTo;
  if (back && deps.adapters.has(back.provider))
    return {
      provider: back.provider,
      channel: back.channel,
      to: back.to,
      ...(back.from ? { from: back.from } : {}),
    };
  const routed = stored.routing ? deps.destination(stored.routing) : undefined;
  return routed?.to ? { provider: routed.provider, channel: routed.channel, to: routed.to } : undefined;
}

/**
 * An officer answered: the farmer gets the answer on the channel they used, in their language (the one they
 * picked since, else the result's).
 */
export async function handleAnswer(requestId: string, deps: HandlerDeps): Promise<void> {
  const stored = await deps.records.store.get(requestId);
  if (!stored) throw new PermanentJobError("answered result is no longer stored");
  const language = stored.owner
    ? await deps.languages.resolve(stored.owner, { tag: stored.language })
    : stored.language;
  const view = answerViewOf(stored, language, deps.knowledge);
  if (!view) throw new PermanentJobError("the result has no officer answer");
  const destination = returnAddressOf(stored, deps);
  if (!destination) throw new PermanentJobError("the result has no address to answer");
  const adapter = adapterFor(deps.adapters, destination.provider);
  await adapter.send({
    ...destination,
    text: deps.renderer.answer(view, language, adapter.capabilities(destination.channel)),
  });
}
