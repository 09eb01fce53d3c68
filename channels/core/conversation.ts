import type { Language } from "../../src/diagnosis/types.js";
import type { StoredResult } from "../../src/results/types.js";
import { languageButtons } from "./actions.js";
import type { HandlerDeps } from "./deps.js";
import { answerViewOf } from "./render/answer.js";
import { isAnswer, viewOf } from "./render/view.js";
import type { Adapter, Button, Capabilities, Reply } from "./types.js";

/** Where replies go: the provider, its channel, the farmer's address and (for a reply) our address they wrote to. */
export type Target = Pick<Reply, "provider" | "channel" | "to" | "from">;

/** Answers one farmer in one language, rendered for what their channel can show. */
export interface Conversation {
  readonly language: Language;
  /** The provider's channel (whatsapp, sms...): for logs, which must not name the farmer. */
  readonly channel: string;
  readonly capabilities: Capabilities;
  say(key: string, vars?: Record<string, string | number>, buttons?: Button[][]): Promise<void>;
  /**
   * A stored result: its summary (on SMS; chats show everything) or its treatment. Answers carry the
   * language buttons, which show this result again in the chosen language; a "take another photo" does not.
   */
  result(stored: StoredResult, part?: "summary" | "treatment"): Promise<void>;
}

export function conversation(
  target: Target,
  adapter: Adapter,
  language: Language,
  deps: Pick<HandlerDeps, "renderer" | "knowledge" | "view">,
): Conversation {
  const capabilities = adapter.capabilities(target.channel);
  const send = (text: string, buttons?: Button[][]) =>
    adapter.send({ ...target, text, ...(buttons && capabilities.buttons ? { buttons } : {}) });
  return {
    language,
    channel: target.channel,
    capabilities,
    say: (key, vars, buttons) => send(deps.renderer.text(language, capabilities, key, vars), buttons),
    result(stored, part = "summary") {
      // Once an officer has answered, the answer is the result: a code looked up afterwards (and its
      // treatment) gives what the officer said, not the model's reading they corrected.
      const answered = answerViewOf(stored, language, deps.knowledge);
      if (answered) return send(deps.renderer.answer(answered, language, capabilities, part));
      const view = viewOf(stored, language, deps.knowledge, deps.view);
      const render = part === "treatment" ? deps.renderer.treatment : deps.renderer.result;
      const buttons = isAnswer(view) ? languageButtons({ result: view.code }) : undefined;
      return send(render(view, language, capabilities), buttons);
    },
  };
}
