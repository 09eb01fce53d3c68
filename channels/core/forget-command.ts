import { FORGET_CONFIRM_SECONDS } from "../../src/limits.js";
import { forgetFarmer } from "../../src/results/forget.js";
import type { Conversation, Target } from "./conversation.js";
import type { HandlerDeps } from "./deps.js";

/**
 * "0", sent twice within FORGET_CONFIRM_SECONDS: everything kept about the farmer is deleted (src/results/
 * forget.ts), with their language and the replies waiting for them here. The first "0" says what will go.
 */
export async function forgetOnConfirm(
  talk: Conversation,
  owner: string,
  target: Target,
  deps: Pick<HandlerDeps, "records" | "languages" | "windows" | "logger">,
) {
  const { forgetRequests } = deps.records;
  if (!(await forgetRequests.confirm(owner))) {
    await forgetRequests.ask(owner);
    return talk.say("forget_confirm", { minutes: FORGET_CONFIRM_SECONDS / 60 });
  }
  const forgotten = await forgetFarmer(deps.records, owner);
  await deps.languages.forget(owner);
  await deps.windows.forget(target);
  deps.logger.info({ channel: talk.channel, ...forgotten }, "farmer's data deleted at their request");
  return talk.say("forgotten");
}
