import type { StoredResult } from "../../src/results/types.js";
import { FARMER_REPLIES } from "../limits.js";
import { encodeAction } from "./actions.js";
import { keyTyped } from "./code-command.js";
import type { Conversation } from "./conversation.js";
import type { HandlerDeps } from "./deps.js";
import type { Button } from "./types.js";

/**
 * The farmer's side of the expert loop (issue 12): "did this help?" after an answer, "wrong" sending the
 * photo to the officers' review queue, and the notice, on a photo channel's first message, that photos may be
 * kept to train the service, with the way to refuse.
 */
export type FarmerReply = keyof typeof FARMER_REPLIES;

/** "1", "3", "9" or "0" alone (spaces and a trailing full stop forgiven); anything else is not such a reply. */
export function farmerReplyOf(text: string): FarmerReply | undefined {
  const typed = keyTyped(text);
  return (Object.keys(FARMER_REPLIES) as FarmerReply[]).find((reply) => FARMER_REPLIES[reply] === typed);
}

const REPLY_VARS = {
  yes: FARMER_REPLIES.helped,
  no: FARMER_REPLIES.wrong,
  refuse: FARMER_REPLIES.refusePhotos,
};

/** A diagnosis or a healthy plant is an answer the farmer can judge; an unsure one is already with officers. */
function judgeable(stored: StoredResult): boolean {
  const { outcome, image_analysis } = stored.result;
  return (outcome === "diagnosed" || outcome === "healthy") && !image_analysis.quality_issue;
}

/** Asks "did this help?" under an answer: buttons where the channel has them, else "reply 1 / 3". */
export async function askFeedback(
  talk: Conversation,
  stored: StoredResult,
  deps: Pick<HandlerDeps, "renderer">,
) {
  if (!judgeable(stored)) return;
  if (!talk.capabilities.buttons) return talk.say("feedback_ask", REPLY_VARS);
  const label = (key: string) => deps.renderer.texts(talk.language, key);
  const buttons: Button[][] = [
    [
      {
        text: label("feedback_yes"),
        data: encodeAction({ kind: "feedback", code: stored.code, helped: true }),
      },
      {
        text: label("feedback_no"),
        data: encodeAction({ kind: "feedback", code: stored.code, helped: false }),
      },
    ],
  ];
  return talk.say("feedback_question", undefined, buttons);
}

/** The farmer's verdict on a result: kept with it; "wrong" puts the case in the review queue. */
export async function recordFeedback(
  talk: Conversation,
  stored: StoredResult | undefined,
  helped: boolean,
  deps: Pick<HandlerDeps, "records" | "logger">,
) {
  if (!stored) return talk.say("no_result");
  await deps.records.store.setState(stored.result.request_id, "feedback", {
    helped,
    at: new Date().toISOString(),
  });
  deps.logger.info({ requestId: stored.result.request_id, helped }, "farmer feedback");
  if (helped) return talk.say("feedback_thanks");
  await deps.records.reviews.add(stored, "farmer_said_wrong");
  return talk.say("feedback_wrong", { code: stored.code });
}

/**
 * On a channel photos come in on, the farmer's first message is followed by the notice (once per farmer):
 * refused with its button where the channel has buttons, else by replying "9".
 */
export async function tellAboutPhotos(
  talk: Conversation,
  owner: string,
  deps: Pick<HandlerDeps, "records" | "renderer">,
) {
  if (!talk.capabilities.media || !(await deps.records.consent.inform(owner))) return;
  if (!talk.capabilities.buttons) return talk.say("consent_notice", REPLY_VARS);
  const refuse = {
    text: deps.renderer.texts(talk.language, "consent_button"),
    data: encodeAction({ kind: "refuse_photos" }),
  };
  return talk.say("consent_notice_button", undefined, [[refuse]]);
}

/**
 * The farmer said no: their photos are never kept beyond their 30 days (recorded, with the date), and the
 * labelled examples kept from them before are deleted.
 */
export async function refusePhotos(
  talk: Conversation,
  owner: string,
  deps: Pick<HandlerDeps, "records" | "logger">,
) {
  await deps.records.consent.set(owner, "refused");
  const deleted = await deps.records.examples.deleteOwner(owner);
  deps.logger.info({ channel: talk.channel, deleted }, "farmer refused keeping photos");
  return talk.say("consent_refused");
}

/**
 * What the worker adds to its conversations for the expert loop: "did this help?" under each answer, and the
 * photo notice after a farmer's first message. src/channels' worker-main composes it in; the channel tests
 * that count a conversation's messages leave it out, test/channels/expert-loop.test.ts tests it.
 */
export interface ExpertLoop {
  afterAnswer(talk: Conversation, stored: StoredResult): Promise<void>;
  afterTurn(talk: Conversation, owner: string): Promise<void>;
}

export function createExpertLoop(deps: Pick<HandlerDeps, "records" | "renderer">): ExpertLoop {
  return {
    afterAnswer: (talk, stored) => askFeedback(talk, stored, deps),
    afterTurn: (talk, owner) => tellAboutPhotos(talk, owner, deps),
  };
}
