import { FORGET_CONFIRM_SECONDS } from "../../src/limits.js";
import { type Forgotten, forgetFarmer } from "../../src/results/forget.js";
import type { Conversation } from "./conversation.js";
import type { HandlerDeps } from "./deps.js";

type ForgetDeps = Pick<HandlerDeps, "records" | "languages" | "windows" | "logger">;

/**
 * Everything kept about the farmer: what src/results/forget.ts deletes, their language, and the replies kept
 * for them on any channel. Run in the farmer's chain of jobs, so none of theirs queued before it runs after.
 */
export async function forgetEverything(owner: string, deps: ForgetDeps): Promise<Forgotten> {
  const forgotten = await forgetFarmer(deps.records, owner);
  await deps.languages.forget(owner);
  await deps.windows.forgetOwner(owner);
  return forgotten;
}

/**
 * "0", sent twice within FORGET_CONFIRM_SECONDS: everything kept about the farmer is deleted. The first "0"
 * says what will go; the ask is used up only once the deletion is done, so a retried job still has it.
 */
export async function forgetOnConfirm(talk: Conversation, owner: string, deps: ForgetDeps) {
  const { forgetRequests } = deps.records;
  if (!(await forgetRequests.asked(owner))) {
    await forgetRequests.ask(owner);
    return talk.say("forget_confirm", { minutes: FORGET_CONFIRM_SECONDS / 60 });
  }
  const forgotten = await forgetEverything(owner, deps);
  deps.logger.info({ channel: talk.channel, ...forgotten }, "farmer's data deleted at their request");
  await talk.say("forgotten");
  // The confirmation just sent went into their message log: that goes too.
  await deps.records.sent.clear(owner);
  await forgetRequests.done(owner);
}

/** The console's deletion for a farmer who asked the call centre, as a job in their chain. */
export async function handleForget(owner: string, deps: ForgetDeps): Promise<void> {
  const forgotten = await forgetEverything(owner, deps);
  deps.logger.info(forgotten, "farmer's data deleted at their request (console)");
}
