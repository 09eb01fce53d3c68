import type { Language } from "../../../src/diagnosis/types.js";
import type { Capabilities } from "../types.js";
import { type AnswerView, renderChatAnswer, renderSmsAnswer } from "./answer.js";
import { renderChat, renderChatText, STYLE } from "./chat.js";
import { renderSmsSummary, renderSmsText, renderSmsTreatment } from "./sms.js";
import type { Texts } from "./texts.js";
import type { ResultView } from "./view.js";

/**
 * Turns results and fixed texts into what a channel can carry, by its capabilities (never by its name).
 * USSD has screens of its own (ussd.ts).
 */
export interface Renderer {
  /** The answer to a photo, and to its result code: on SMS the summary, whose tail offers the treatment. */
  result(view: ResultView, language: Language, capabilities: Capabilities): string;
  /** The answer to "code 2": on SMS the treatment; chats carry everything in every answer. */
  treatment(view: ResultView, language: Language, capabilities: Capabilities): string;
  text(
    language: Language,
    capabilities: Capabilities,
    key: string,
    vars?: Record<string, string | number>,
  ): string;
  /** An extension officer's answer to a photo the farmer sent; on SMS its treatment for "code 2". */
  answer(
    view: AnswerView,
    language: Language,
    capabilities: Capabilities,
    part?: "summary" | "treatment",
  ): string;
  readonly texts: Texts;
}

/** A sent message as a person reads it: the chat style's markup taken out (the console's delivery log). */
export function readableText(text: string, { text: kind }: Capabilities): string {
  return kind.kind === "chat" ? STYLE[kind.style].plain(text) : text;
}

export function createRenderer(t: Texts): Renderer {
  return {
    texts: t,
    result(view, language, { text }) {
      if (text.kind === "chat") return renderChat(view, language, t, text.style, text.maxChars);
      return renderSmsSummary(view, language, t, text.maxSegments);
    },
    treatment(view, language, { text }) {
      if (text.kind === "chat") return renderChat(view, language, t, text.style, text.maxChars);
      return renderSmsTreatment(view, language, t, text.maxSegments);
    },
    answer(view, language, { text }, part) {
      if (text.kind === "chat") return renderChatAnswer(view, language, t, text.style, text.maxChars);
      return renderSmsAnswer(view, language, t, text.maxSegments, part);
    },
    text(language, { text }, key, vars) {
      const said = t(language, key, vars);
      if (text.kind === "chat") return renderChatText(said, text.style, text.maxChars);
      return renderSmsText(said, text.maxSegments);
    },
  };
}
