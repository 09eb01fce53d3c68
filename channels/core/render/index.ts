import type { Language } from "../../../src/diagnosis/types.js";
import type { ChannelKind } from "../types.js";
import { type AnswerView, renderChatAnswer, renderSmsAnswer } from "./answer.js";
import { type ChatFlavour, renderChat, renderChatText, STYLE } from "./chat.js";
import { renderSmsSummary, renderSmsText, renderSmsTreatment } from "./sms.js";
import type { Texts } from "./texts.js";
import type { ResultView } from "./view.js";

/** Turns results and fixed texts into what each channel can carry. USSD has its own screens (ussd.ts). */
export interface Renderer {
  /** The answer to a photo, and to its result code: on SMS the summary, whose tail offers the treatment. */
  result(view: ResultView, language: Language, channel: ChannelKind): string;
  /** The answer to "code 2": on SMS the treatment; chats carry everything in every answer. */
  treatment(view: ResultView, language: Language, channel: ChannelKind): string;
  text(language: Language, channel: ChannelKind, key: string, vars?: Record<string, string | number>): string;
  /** An extension officer's answer to a photo the farmer sent. */
  answer(view: AnswerView, language: Language, channel: ChannelKind): string;
}

// MMS replies go back as SMS: the handset that sent the photo reads them as texts.
function chatFlavour(channel: ChannelKind): ChatFlavour | undefined {
  if (channel === "telegram") return "telegram";
  if (channel === "whatsapp") return "whatsapp";
  return undefined;
}

/** A sent message as a person reads it: the chat flavour's markup taken out (the console's delivery log). */
export function readableText(text: string, channel: ChannelKind): string {
  const flavour = chatFlavour(channel);
  return flavour ? STYLE[flavour].plain(text) : text;
}

export function createRenderer(t: Texts): Renderer {
  return {
    result(view, language, channel) {
      const flavour = chatFlavour(channel);
      return flavour ? renderChat(view, language, t, flavour) : renderSmsSummary(view, language, t);
    },
    treatment(view, language, channel) {
      const flavour = chatFlavour(channel);
      return flavour ? renderChat(view, language, t, flavour) : renderSmsTreatment(view, language, t);
    },
    answer(view, language, channel) {
      const flavour = chatFlavour(channel);
      return flavour ? renderChatAnswer(view, language, t, flavour) : renderSmsAnswer(view, language, t);
    },
    text(language, channel, key, vars) {
      const flavour = chatFlavour(channel);
      const text = t(language, key, vars);
      return flavour ? renderChatText(text, flavour) : renderSmsText(text);
    },
  };
}
