import type { Language } from "../../../src/diagnosis/types.js";
import { OFFICER_SMS_MAX_SEGMENTS } from "../../../src/limits.js";
import type { StoredResult } from "../../../src/results/types.js";
import { fitBlocks, list, STYLE } from "./chat.js";
import { fitSentences, treatmentSentences } from "./sms.js";
import type { Texts } from "./texts.js";
import { asSentence, known, sentences, type ViewKnowledge } from "./view.js";

/** An officer's answer, as the farmer is told it: a class with its farmer-level texts, or their own words. */
export type AnswerView =
  | {
      kind: "class";
      code: string;
      name: string;
      description: string;
      actions: string[];
      prevention: string[];
    }
  | { kind: "text"; code: string; diagnosis: string; advice: string };

export function answerViewOf(
  stored: StoredResult,
  language: Language,
  knowledge: ViewKnowledge,
): AnswerView | undefined {
  const decision = stored.review?.decision;
  if (!decision) return undefined;
  const code = stored.code;
  if (!decision.classId)
    return { kind: "text", code, diagnosis: decision.diagnosis ?? "", advice: decision.advice ?? "" };
  const classId = decision.classId;
  const treated = known(() => knowledge.treatment([classId], language, "simple"));
  return {
    kind: "class",
    code,
    name: known(() => knowledge.name(classId, language)) ?? classId,
    // A healthy class describes no disease: the answer names it, with what keeps it healthy.
    description: known(() => knowledge.describe(classId, language, "simple").description) ?? "",
    actions: treated?.immediate_actions ?? [],
    prevention: treated?.prevention ?? [],
  };
}

export function renderChatAnswer(
  view: AnswerView,
  language: Language,
  t: Texts,
  style: keyof typeof STYLE,
  maxChars: number,
): string {
  const { bold, esc } = STYLE[style];
  const blocks =
    view.kind === "text"
      ? [
          bold(esc(t(language, "officer_text", { code: view.code }))),
          bold(esc(view.diagnosis)),
          esc(view.advice),
        ]
      : [
          bold(esc(t(language, "officer_class", { code: view.code, name: view.name }))),
          esc(view.description),
          list(bold(esc(t(language, "what_to_do"))), view.actions.map(esc)),
          list(bold(esc(t(language, "prevention"))), view.prevention.map(esc)),
        ];
  return fitBlocks(blocks.filter(Boolean), "", maxChars);
}

/**
 * On SMS a named class is cut to its segments like any result, its tail offering the treatment ("code 2"),
 * which `part` "treatment" answers. An officer's own words are cut between sentences at
 * OFFICER_SMS_MAX_SEGMENTS (the console bounds their length, not their segments); their first line names the
 * result code, by which USSD shows the whole answer.
 */
export function renderSmsAnswer(
  view: AnswerView,
  language: Language,
  t: Texts,
  maxSegments: number,
  part: "summary" | "treatment" = "summary",
): string {
  if (view.kind === "text") {
    // Its first line names the code already: no tail repeats it.
    const parts = [
      t(language, "officer_text", { code: view.code }),
      view.diagnosis,
      ...sentences(view.advice),
    ];
    return fitSentences(parts.filter(Boolean), "", OFFICER_SMS_MAX_SEGMENTS);
  }
  const codeLine = t(language, "code_line", { code: view.code });
  if (part === "treatment") return fitSentences(treatmentSentences(view, language, t), codeLine, maxSegments);
  const parts = [
    t(language, "officer_class", { code: view.code, name: view.name }),
    ...sentences(view.description),
    ...view.actions.map(asSentence),
  ];
  return fitSentences(parts, t(language, "code_more", { code: view.code }), maxSegments);
}
