import { LANGUAGES, type Language } from "../../src/diagnosis/types.js";
import { normalizeShortCode } from "../../src/results/short-code.js";
import type { ResultStore } from "../../src/results/store.js";
import type { StoredResult } from "../../src/results/types.js";
import type { LanguageMemory } from "../core/language.js";
import { NATIVE_NAMES } from "../core/language-names.js";
import { statusText } from "../core/render/sms.js";
import type { Texts } from "../core/render/texts.js";
import { paginate, type UssdReply, ussdScreen } from "../core/render/ussd.js";
import { type ResultView, type SimpleKnowledge, viewOf } from "../core/render/view.js";

export interface UssdDeps {
  store: ResultStore;
  languages: LanguageMemory;
  texts: Texts;
  knowledge?: SimpleKnowledge;
}

export interface UssdRequest {
  phoneNumber: string;
  /** Every input of the session so far, joined by "*" (Africa's Talking's protocol); "" on the first screen. */
  text: string;
}

type State =
  | { at: "main" }
  | { at: "code"; notFound?: string }
  | { at: "result"; stored: StoredResult }
  | { at: "treatment"; stored: StoredResult; page: number }
  | { at: "language" };

type Step = State | { reply: UssdReply };

/**
 * Replays the session's inputs from the main menu to find the current screen. USSD answers only from what
 * is stored (a result, a language): a network drops a session that waits more than a few seconds.
 */
export async function ussdRespond(request: UssdRequest, deps: UssdDeps): Promise<UssdReply> {
  const owner = request.phoneNumber;
  const language = await deps.languages.resolve(owner, { phone: owner });
  const menu = new Menu(deps, owner, language);
  let state: State = { at: "main" };
  let invalid = false;
  const inputs = request.text === "" ? [] : request.text.split("*");
  for (const input of inputs) {
    const step: Step | undefined = await menu.next(state, input.trim());
    if (step && "reply" in step) return step.reply;
    invalid = step === undefined;
    state = step ?? state;
  }
  return menu.show(state, invalid);
}

class Menu {
  constructor(
    private readonly deps: UssdDeps,
    private readonly owner: string,
    private readonly language: Language,
  ) {}

  private t(key: string, vars?: Record<string, string | number>): string {
    return this.deps.texts(this.language, key, vars);
  }

  private view(stored: StoredResult): ResultView {
    return viewOf(stored, this.language, this.deps.knowledge);
  }

  /** The state after one input, a final reply, or undefined when the input is not a choice on this screen. */
  async next(state: State, input: string): Promise<Step | undefined> {
    switch (state.at) {
      case "main":
        if (input === "1") {
          const stored = await this.deps.store.lastFor(this.owner);
          return stored ? { at: "result", stored } : { reply: ussdScreen("END", this.t("no_result")) };
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
        const chosen = LANGUAGES[Number(input) - 1];
        if (!chosen || !/^\d$/.test(input)) return input === "0" ? { at: "main" } : undefined;
        await this.deps.languages.set(this.owner, chosen);
        return {
          reply: ussdScreen(
            "END",
            this.deps.texts(chosen, "language_changed", { name: NATIVE_NAMES[chosen] }),
          ),
        };
      }
    }
  }

  show(state: State, invalid: boolean): UssdReply {
    const prefix = invalid ? `${this.t("ussd.invalid")}\n` : "";
    const back = `0. ${this.t("ussd.back")}`;
    switch (state.at) {
      case "main":
        return ussdScreen("CON", `${prefix}${this.t("ussd.menu")}`, [
          `1. ${this.t("ussd.last")}`,
          `2. ${this.t("ussd.by_code")}`,
          `3. ${this.t("ussd.language")}`,
        ]);
      case "code": {
        const note = state.notFound ? `${this.t("code_not_found", { code: state.notFound })}\n` : "";
        return ussdScreen("CON", `${note}${this.t("ussd.enter_code")}`, [back]);
      }
      case "language":
        return ussdScreen(
          "CON",
          `${prefix}${this.t("choose_language")}`,
          LANGUAGES.map((lang, i) => `${i + 1}. ${NATIVE_NAMES[lang]}`),
        );
      case "result":
        return this.showResult(state.stored, prefix, back);
      case "treatment":
        return this.showTreatment(state.stored, state.page, back);
    }
  }

  private showResult(stored: StoredResult, prefix: string, back: string): UssdReply {
    const view = this.view(stored);
    if (view.kind !== "diagnosis") return ussdScreen("END", statusText(view, this.language, this.deps.texts));
    const body = [
      prefix + this.t("diagnosis", { name: view.name, confidence: view.confidence }),
      this.t(`urgency.${view.urgency}`),
      this.t("code_line", { code: view.code }),
    ].join("\n");
    return ussdScreen("CON", body, [`1. ${this.t("ussd.treatment")}`, back]);
  }

  private showTreatment(stored: StoredResult, page: number, back: string): UssdReply {
    const view = this.view(stored);
    if (view.kind !== "diagnosis") return ussdScreen("END", statusText(view, this.language, this.deps.texts));
    const next = `1. ${this.t("ussd.next")}`;
    const lines = [
      `${this.t("what_to_do")}:`,
      ...view.actions.map((a) => `- ${a}`),
      ...(view.prevention.length
        ? [`${this.t("prevention")}:`, ...view.prevention.map((p) => `- ${p}`)]
        : []),
    ];
    // Sized for the options of a middle page, so every page fits whichever options it ends up with.
    const pages = paginate(lines, [next, back]);
    const last = Math.min(page, pages.length - 1);
    if (last === pages.length - 1) return ussdScreen("END", pages[last] ?? "");
    return ussdScreen("CON", pages[last] ?? "", [next, back]);
  }
}
