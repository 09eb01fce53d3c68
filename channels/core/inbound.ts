import { ImageError } from "../../src/diagnosis/diagnoser.js";
import type { Language } from "../../src/diagnosis/types.js";
import { SOURCES, type Source, type StoredResult } from "../../src/results/types.js";
import { type Action, type Again, decodeAction, languageButtons } from "./actions.js";
import { type AnswerProgress, answerOnce, type SaveProgress } from "./answer-once.js";
import { asksLastTreatment, parseCodeRequest } from "./code-command.js";
import { type Conversation, conversation } from "./conversation.js";
import type { HandlerDeps } from "./deps.js";
import { farmerReplyOf, recordFeedback, refusePhotos } from "./expert-loop.js";
import { forgetOnConfirm } from "./forget-command.js";
import { languageIn, NATIVE_NAMES } from "./language-names.js";
import { showProgress } from "./progress.js";
import type { ChannelJob } from "./queue.js";
import { adapterFor } from "./registry.js";
import { deliverHeld } from "./reply-window.js";
import { type Adapter, type InboundMessage, MediaError, PermanentJobError } from "./types.js";

export type InboundJob = Extract<ChannelJob, { kind: "inbound" }>;

/** The channel a photo came in on, as the results keep it (whatsapp, mms, telegram...). */
const isSource = (channel: string): channel is Source => (SOURCES as readonly string[]).includes(channel);

export type SaveJob = SaveProgress<AnswerProgress & Pick<InboundJob, "requestId" | "noticeSent">>;

interface Turn {
  message: InboundMessage;
  adapter: Adapter;
  talk: Conversation;
  /** What the farmer wrote besides a language's name: a photo's description, a command. */
  text: string;
  /** Replies kept outside the reply window went out before this turn (reply-window.ts). */
  heldDelivered: number;
  job: InboundJob;
  save: SaveJob;
  deps: HandlerDeps;
}

/**
 * One farmer message: a button, a photo (with its caption), or text. A language named in a caption or a
 * message, or pressed on a button, is remembered and used for this very answer.
 */
export async function handleInbound(job: InboundJob, save: SaveJob, deps: HandlerDeps): Promise<void> {
  const { message } = job;
  const adapter = adapterFor(deps.adapters, message.provider);
  if (message.button) await adapter.acknowledge?.(message.button);
  const action = decodeAction(message.button?.data);
  const said = languageIn(message.text ?? "");
  const chosen = (action?.kind === "language" ? action.language : undefined) ?? said.language;
  if (chosen) await deps.languages.set(message.owner, chosen);
  const language =
    chosen ??
    (await deps.languages.resolve(message.owner, { tag: message.languageHint, phone: message.phone }));
  const target = { provider: message.provider, channel: message.channel, to: message.from, from: message.to };
  const heldDelivered = await deliverHeld(target, adapter, deps.windows, message.receivedAt, deps.logger);
  const talk = conversation(target, adapter, language, deps);
  const turn: Turn = { message, adapter, talk, text: said.rest, heldDelivered, job, save, deps };
  await answer(turn, action, chosen !== undefined);
  // A farmer deleting their data is not told about keeping photos (which would record that they were).
  if (message.media || farmerReplyOf(turn.text) !== "forget")
    await deps.expertLoop?.afterTurn(talk, message.owner);
}

async function answer(turn: Turn, action: Action | undefined, languageChosen: boolean): Promise<void> {
  const { message, talk, deps } = turn;
  if (action?.kind === "language") return showAgain(turn, action.again);
  if (action?.kind === "feedback") {
    // A verdict counts only on the presser's own result: a button's data names any code it is given.
    const stored = await deps.records.store.getByCode(action.code);
    return recordFeedback(talk, stored?.owner === message.owner ? stored : undefined, action.helped, deps);
  }
  if (action?.kind === "refuse_photos") return refusePhotos(talk, message.owner, deps);
  if (message.media) return answerPhoto(turn);
  if (languageChosen) return talk.say("language_changed", { name: NATIVE_NAMES[talk.language] });
  if (message.start) return talk.say("welcome", undefined, languageButtons({ text: "welcome" }));
  return answerText(turn);
}

/** A language button: what it was under, again in the chosen language. */
async function showAgain({ talk, deps }: Turn, again: Again): Promise<void> {
  if (again && "text" in again) return talk.say(again.text, undefined, languageButtons(again));
  const stored = again ? await deps.records.store.getByCode(again.result) : undefined;
  if (stored) return talk.result(stored);
  return talk.say("language_changed", { name: NATIVE_NAMES[talk.language] });
}

async function answerPhoto(turn: Turn): Promise<void> {
  const { job, talk, deps } = turn;
  const earlier = job.requestId ? await deps.records.store.get(job.requestId) : undefined;
  let stored = earlier;
  if (!stored) {
    const progress = showProgress({
      conversation: talk,
      adapter: turn.adapter,
      to: turn.message.from,
      receivedAt: turn.message.receivedAt,
      noticeSent: job.noticeSent ?? false,
      onNotice: () => turn.save({ noticeSent: true }),
      logger: deps.logger,
    });
    let diagnosed: Awaited<ReturnType<typeof diagnose>>;
    try {
      diagnosed = await diagnose(turn, talk.language);
    } finally {
      await progress.stop();
    }
    if (diagnosed === "too_large") return talk.say("too_large");
    if (!diagnosed) return talk.say("resend");
    stored = diagnosed;
    await turn.save({ requestId: stored.result.request_id });
  }
  await answerOnce(talk, stored, job, turn.save, deps);
}

async function diagnose(
  { message, adapter, text, deps }: Turn,
  language: Language,
): Promise<StoredResult | "too_large" | undefined> {
  // Results keep the channel a photo came in on; a provider's channel must be one of their sources.
  const source = message.channel;
  if (!isSource(source)) throw new PermanentJobError(`channel ${source} is not a result source`);
  try {
    const image = await adapter.fetchMedia(message.media!);
    // Boxes are kept for the officers' console; the farmer's reply does not show them.
    const context = {
      language,
      detailLevel: "simple",
      includeBbox: true,
      ...(text ? { description: text } : {}),
    } as const;
    const result = await deps.diagnoser.diagnose(image, context, crypto.randomUUID());
    return await deps.records.record(result, {
      language,
      owner: message.owner,
      source,
      photo: image,
      ...(text ? { note: text } : {}),
      replyTo: { provider: message.provider, channel: message.channel, to: message.from, from: message.to },
    });
  } catch (error) {
    // Only what the user can fix by resending ends here; anything else is ours and is retried by the queue.
    if (error instanceof ImageError || error instanceof MediaError) {
      deps.logger.info({ provider: message.provider, reason: error.message }, "unreadable photo");
      // Too many bytes or too many pixels (a 108 MP photo under 10 MB): resending the same file cannot help.
      const tooLarge =
        error instanceof MediaError
          ? error.tooLarge
          : error.code === "too_large" || error.code === "too_many_pixels";
      return tooLarge ? "too_large" : undefined;
    }
    throw error;
  }
}

/**
 * Text without a photo: "1" / "3" judge the farmer's last answer, "9" refuses that photos are kept, "0" twice
 * deletes everything kept about the farmer; a result code gets that result's summary, the code and 2 its
 * treatment, a 2 alone the last summary's treatment; anything else gets help.
 */
async function answerText({ message, text, talk, heldDelivered, deps }: Turn): Promise<void> {
  const reply = farmerReplyOf(text);
  if (reply === "refusePhotos") return refusePhotos(talk, message.owner, deps);
  if (reply === "forget") return forgetOnConfirm(talk, message.owner, deps);
  if (reply)
    return recordFeedback(talk, await deps.records.store.lastFor(message.owner), reply === "helped", deps);
  if (asksLastTreatment(text)) {
    const { store } = deps.records;
    const last = (await store.shownFor(message.owner)) ?? (await store.lastFor(message.owner));
    return last ? talk.result(last, "treatment") : talk.say("no_result");
  }
  const request = text ? parseCodeRequest(text) : undefined;
  // A farmer answering the notice that something waits for them has it now: no help text after it.
  if (!request && heldDelivered) return;
  if (!request) return talk.say("help", undefined, languageButtons({ text: "help" }));
  const stored = await deps.records.store.getByCode(request.code);
  if (!stored) return talk.say("code_not_found", { code: request.code });
  await talk.result(stored, request.part);
  if (request.part === "summary") await deps.records.store.setShown(message.owner, stored.result.request_id);
}

/**
 * An attempt failed and will be retried (`final` false) or was the last one: the farmer of a photo not yet
 * answered hears it, once, instead of silence (the first failure: it will come; the last: send it again).
 * Telling them goes through the same provider and may fail as well: that is logged, not retried.
 */
export async function tellAboutFailure(job: InboundJob, final: boolean, save: SaveJob, deps: HandlerDeps) {
  const { message } = job;
  // A farmer who has their answer lost only a follow-up: nothing to tell them.
  if (!message.media || job.resultSent || (!final && (job.requestId || job.noticeSent))) return;
  try {
    const adapter = adapterFor(deps.adapters, message.provider);
    const language = await deps.languages.resolve(message.owner, {
      tag: message.languageHint,
      phone: message.phone,
    });
    const talk = conversation(
      { provider: message.provider, channel: message.channel, to: message.from, from: message.to },
      adapter,
      language,
      deps,
    );
    await talk.say(final ? "gave_up" : "delayed");
    if (!final) await save({ noticeSent: true });
  } catch (error) {
    deps.logger.warn(
      { provider: message.provider, err: (error as Error).message },
      "could not tell the farmer about the failure",
    );
  }
}
