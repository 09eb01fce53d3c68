import type { Logger } from "pino";
import { type Diagnoser, ImageError } from "../../src/diagnosis/diagnoser.js";
import type { Language } from "../../src/diagnosis/types.js";
import type { Records } from "../../src/results/records.js";
import type { Routing, StoredResult } from "../../src/results/types.js";
import { parseCodeRequest } from "./code-command.js";
import type { LanguageMemory } from "./language.js";
import { NATIVE_NAMES, parseLanguageCommand } from "./language-names.js";
import { answerViewOf } from "./render/answer.js";
import type { Renderer } from "./render/index.js";
import { type SimpleKnowledge, viewOf } from "./render/view.js";
import {
  type Adapter,
  type ChannelKind,
  type InboundMessage,
  isChannelKind,
  isProvider,
  MediaError,
  PermanentJobError,
  type Provider,
} from "./types.js";

export type Adapters = Partial<Record<Provider, Adapter>>;

export interface HandlerDeps {
  diagnoser: Diagnoser;
  /** Results, photos, review cases, consent and the delivery log (src/results/records.ts). */
  records: Records;
  languages: LanguageMemory;
  renderer: Renderer;
  adapters: Adapters;
  knowledge?: SimpleKnowledge;
  logger: Logger;
}

/** The key a user's language and last result hang on: the phone number across SMS/WhatsApp/USSD, or the chat. */
export function ownerOf(provider: Provider, address: string): string {
  return provider === "telegram" ? `tg:${address}` : address;
}

function adapterFor(deps: HandlerDeps, provider: Provider): Adapter {
  const adapter = deps.adapters[provider];
  if (!adapter) throw new PermanentJobError(`no ${provider} adapter configured in this worker`);
  return adapter;
}

/** Answers in the conversation the message came from. */
interface Replier {
  send(text: string, languageKeyboard?: boolean): Promise<void>;
  say(
    language: Language,
    key: string,
    vars?: Record<string, string | number>,
    languageKeyboard?: boolean,
  ): Promise<void>;
}

function replierFor(message: InboundMessage, adapter: Adapter, renderer: Renderer): Replier {
  const send = (text: string, languageKeyboard = false) =>
    adapter.send({
      provider: message.provider,
      channel: message.channel,
      to: message.from,
      from: message.to,
      text,
      languageKeyboard: languageKeyboard && message.channel === "telegram",
    });
  return {
    send,
    say: (language, key, vars, languageKeyboard) =>
      send(renderer.text(language, message.channel, key, vars), languageKeyboard),
  };
}

export async function handleInbound(
  message: InboundMessage,
  previousRequestId: string | undefined,
  deps: HandlerDeps,
  onStored: (requestId: string) => Promise<void>,
): Promise<void> {
  const adapter = adapterFor(deps, message.provider);
  const owner = ownerOf(message.provider, message.from);
  const reply = replierFor(message, adapter, deps.renderer);

  if (message.callbackQueryId) await adapter.acknowledge?.(message.callbackQueryId);
  const chosen = message.languageChoice ?? (message.text ? parseLanguageCommand(message.text) : undefined);
  if (chosen && !message.media) {
    await deps.languages.set(owner, chosen);
    return reply.say(chosen, "language_changed", { name: NATIVE_NAMES[chosen] });
  }

  const language = await deps.languages.resolve(owner, {
    tag: message.languageHint,
    phone: message.provider === "telegram" ? undefined : message.from,
  });
  if (!message.media) return answerText(message, language, deps, reply);

  const earlier = previousRequestId ? await deps.records.store.get(previousRequestId) : undefined;
  const stored = earlier ?? (await diagnose(message, adapter, language, owner, deps));
  if (!stored) return reply.say(language, "resend");
  if (!earlier) await onStored(stored.result.request_id);
  const view = viewOf(stored, language, deps.knowledge);
  return reply.send(deps.renderer.result(view, language, message.channel), true);
}

async function diagnose(
  message: InboundMessage,
  adapter: Adapter,
  language: Language,
  owner: string,
  deps: HandlerDeps,
): Promise<StoredResult | undefined> {
  try {
    const image = await adapter.fetchMedia(message.media!);
    // Boxes are kept for the officers' console; the farmer's reply does not show them.
    const context = { language, detailLevel: "simple", includeBbox: true } as const;
    const result = await deps.diagnoser.diagnose(image, context, crypto.randomUUID());
    return await deps.records.record(result, {
      language,
      owner,
      source: message.channel,
      photo: image,
      ...(message.text ? { note: message.text } : {}),
      replyTo: { provider: message.provider, channel: message.channel, to: message.from, from: message.to },
    });
  } catch (error) {
    // Only what the user can fix by resending ends here; anything else is ours and is retried by the queue.
    if (error instanceof ImageError || error instanceof MediaError) {
      deps.logger.info({ provider: message.provider, reason: error.message }, "unreadable photo");
      return undefined;
    }
    throw error;
  }
}

/** Text without a photo: a result code gets that result's summary, the code and 2 its treatment; else help. */
async function answerText(message: InboundMessage, language: Language, deps: HandlerDeps, reply: Replier) {
  const request = message.text ? parseCodeRequest(message.text) : undefined;
  if (!request) return reply.say(language, "help", undefined, true);
  const stored = await deps.records.store.getByCode(request.code);
  if (!stored) return reply.say(language, "code_not_found", { code: request.code });
  const view = viewOf(stored, language, deps.knowledge);
  const render = request.part === "treatment" ? deps.renderer.treatment : deps.renderer.result;
  return reply.send(render(view, language, message.channel), true);
}

/** Where a routed result goes: WhatsApp and Telegram have one provider; SMS prefers Africa's Talking. */
export function destinationOf(
  routing: Routing,
  adapters: Adapters,
): { provider: Provider; channel: ChannelKind; to: string } {
  if (routing.channel === "telegram")
    return { provider: "telegram", channel: "telegram", to: routing.chatId ?? "" };
  if (routing.channel === "whatsapp")
    return { provider: "twilio", channel: "whatsapp", to: routing.phone ?? "" };
  const provider = adapters.africastalking ? "africastalking" : "twilio";
  return { provider, channel: "sms", to: routing.phone ?? "" };
}

export async function handleDelivery(
  requestId: string,
  routing: Routing,
  language: Language,
  deps: HandlerDeps,
) {
  const destination = destinationOf(routing, deps.adapters);
  if (!destination.to) throw new PermanentJobError(`routing for ${routing.channel} lacks its address`);
  const adapter = adapterFor(deps, destination.provider);
  const stored = await deps.records.store.get(requestId);
  if (!stored) throw new PermanentJobError("routed result is no longer stored");
  const view = viewOf(stored, language, deps.knowledge);
  await adapter.send({
    ...destination,
    text: deps.renderer.result(view, language, destination.channel),
    languageKeyboard: destination.channel === "telegram",
  });
}

/** Where the farmer is: the conversation the photo came from, else the REST request's routing keys. */
function returnAddressOf(stored: StoredResult, adapters: Adapters) {
  const back = stored.replyTo;
  if (back && isProvider(back.provider) && isChannelKind(back.channel))
    return {
      provider: back.provider,
      channel: back.channel,
      to: back.to,
      ...(back.from ? { from: back.from } : {}),
    };
  return stored.routing ? destinationOf(stored.routing, adapters) : undefined;
}

/** An officer answered: the farmer gets the answer on the channel they used, in the result's language. */
export async function handleAnswer(requestId: string, deps: HandlerDeps) {
  const stored = await deps.records.store.get(requestId);
  if (!stored) throw new PermanentJobError("answered result is no longer stored");
  const view = answerViewOf(stored, stored.language, deps.knowledge);
  if (!view) throw new PermanentJobError("the result has no officer answer");
  const destination = returnAddressOf(stored, deps.adapters);
  if (!destination?.to) throw new PermanentJobError("the result has no address to answer");
  const adapter = adapterFor(deps, destination.provider);
  await adapter.send({
    ...destination,
    text: deps.renderer.answer(view, stored.language, destination.channel),
  });
}
