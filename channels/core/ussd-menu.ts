import type { Knowledge } from "../../src/diagnosis/kb.js";
import { LANGUAGES, type Language } from "../../src/diagnosis/types.js";
import { normalizeShortCode } from "../../src/results/short-code.js";
import type { ResultStore } from "../../src/results/store.js";
import type { StoredResult } from "../../src/results/types.js";
import type { LanguageMemory } from "./language.js";
import { NATIVE_NAMES } from "./language-names.js";
import { answerViewOf } from "./render/answer.js";
import type { Texts } from "./render/texts.js";
import { type UssdScreen, ussdScreens } from "./render/ussd.js";
import { type ViewOptions, viewOf } from "./render/view.js";

export interface UssdDeps {
  store: ResultStore;
  languages: LanguageMemory;
  texts: Texts;
  /** Every screen is rendered from the knowledge base in the caller's language, never from stored texts. */
  knowledge: Knowledge;
  view?: ViewOptions;
}

export interface UssdRequest {
  /** The caller's number (E.164): their farmer key, as on SMS and WhatsApp. */
  phoneNumber: string;
  /** Every input of the session so far, oldest first; none on the first screen. */
  inputs: string[];
}

type State =
  | { at: "main" }
  | { at: "code"; notFound?: string }
  | { at: "result"; stored: StoredResult }
  | { at: "treatment"; stored: StoredResult; page: number }
  | { at: "language" };

type Step = State | { screen: UssdScreen };

/**
 * Replays the session's inputs from the main menu to find the current screen. USSD answers only from what
 * is stored (a result, a language): a network drops a session that waits more than a few seconds.
 * "My last diagnosis" is the caller's latest result with a usable answer (ResultStore.lastFor).
 */
export async function ussdRespond(request: UssdRequest, deps: UssdDeps): Promise<UssdScreen> {
  const owner = request.phoneNumber;
  const language = await deps.languages.resolve(owner, { phone: owner });
  const menu = new Menu(deps, owner, language);
  let state: State = { at: "main" };
  let invalid = false;
  for (const input of request.inputs) {
    const step: Step | undefined = await menu.next(state, input.trim());
    if (step && "screen" in step) return step.screen;
    invalid = step === undefined;
    state = step ?? state;
  }
  return menu.show(state, invalid);
}

class Menu {
  private readonly screens: ReturnType<typeof ussdScreens>;

  constructor(
    private readonly deps: UssdDeps,
    private readonly owner: string,
    private readonly language: Language,
  ) {
    this.screens = ussdScreens(deps.texts, language);
  }

  private view(stored: StoredResult) {
    return viewOf(stored, this.language, this.deps.knowledge, this.deps.view);
  }

  /** The state after one input, a final screen, or undefined when the input is not a choice on this screen. */
  async next(state: State, input: string): Promise<Step | undefined> {
    switch (state.at) {
      case "main":
        if (input === "1") {
          const stored = await this.deps.store.lastFor(this.owner);
          return stored ? { at: "result", stored } : { screen: this.screens.message("no_result") };
        }
        if (input === "2") return { at: "code" };
        if (input === "3") return { at: "language" };
        return undefined;
      case "code": {
        if (input === "0") return { at: "main" };
        const code = normalizeShortCode(input);
        const stored = code ? await this.deps.store.getByCode(code) : undefined;
        return stored ? { at: "result", stored } : { at: "code", notFound: input };
      }
      case "result":
        if (input === "1") return { at: "treatment", stored: state.stored, page: 0 };
        if (input === "0") return { at: "main" };
        return undefined;
      case "treatment":
        if (input === "1") return { ...state, page: state.page + 1 };
        if (input === "0") return { at: "main" };
        return undefined;
      case "language": {
        const chosen = /^\d$/.test(input) ? LANGUAGES[Number(input) - 1] : undefined;
        if (!chosen) return input === "0" ? { at: "main" } : undefined;
        await this.deps.languages.set(this.owner, chosen);
        // The confirmation is the first screen in the new language.
        return {
          screen: ussdScreens(this.deps.texts, chosen).message("language_changed", {
            name: NATIVE_NAMES[chosen],
          }),
        };
      }
    }
  }

  show(state: State, invalid: boolean): UssdScreen {
    // An officer's answer replaces the model's reading: its pages are the result screen and what follows it.
    if (state.at === "result" || state.at === "treatment") {
      const answered = answerViewOf(state.stored, this.language, this.deps.knowledge);
      if (answered) return this.screens.answer(answered, state.at === "result" ? 0 : state.page + 1, invalid);
    }
    switch (state.at) {
      case "main":
        return this.screens.menu(invalid);
      case "code":
        return this.screens.enterCode(state.notFound);
      case "language":
        return this.screens.languages(invalid);
      case "result":
        return this.screens.result(this.view(state.stored), invalid);
      case "treatment":
        return this.screens.treatment(this.view(state.stored), state.page);
    }
  }
}
