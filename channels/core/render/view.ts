import type { Knowledge } from "../../../src/diagnosis/kb.js";
import type { Language, QualityIssue, Urgency } from "../../../src/diagnosis/types.js";
import type { StoredResult } from "../../../src/results/types.js";
import { CONFIDENCE_BANDS } from "../../limits.js";

/** Confidence as a farmer reads it (limits.ts CONFIDENCE_BANDS); never a percentage. */
export type Band = "very_likely" | "likely" | "possibly";

export function bandOf(confidence: number): Band {
  if (confidence >= CONFIDENCE_BANDS.veryLikely) return "very_likely";
  if (confidence >= CONFIDENCE_BANDS.likely) return "likely";
  return "possibly";
}

/**
 * What a farmer is told about a stored result, in the reader's language. `answer` views carry the result
 * code (the farmer can look them up again, on SMS and USSD too); `retake` and `no_model` are not answers.
 * `officer` marks an answer an extension officer will look at (ViewOptions.officerReview).
 */
export type ResultView =
  | {
      kind: "diagnosis";
      code: string;
      name: string;
      band: Band;
      urgency: Urgency;
      description: string;
      actions: string[];
      prevention: string[];
      officer: boolean;
    }
  | { kind: "healthy"; code: string; name: string | undefined; band: Band }
  | { kind: "unsure"; code: string; guess: string | undefined; officer: boolean }
  | { kind: "crop_not_supported"; code: string; officer: boolean }
  | { kind: "retake"; issue: QualityIssue | "not_plant" }
  | { kind: "no_model" };

export type AnswerView = Extract<ResultView, { code: string }>;

export function isAnswer(view: ResultView): view is AnswerView {
  return "code" in view;
}

/** The knowledge base's texts a view is written from. */
export type ViewKnowledge = Pick<Knowledge, "describe" | "name" | "treatment">;

export interface ViewOptions {
  /** Whether an extension officer will look at this result (the review queue); none does by default. */
  officerReview?: (stored: StoredResult) => boolean;
}

// A class the texts do not know (a model newer than the knowledge base) must not put another language's
// words, or none, on a farmer's screen: it is then shown as unsure.
export function known<T>(lookup: () => T): T | undefined {
  try {
    return lookup();
  } catch {
    return undefined;
  }
}

/**
 * Texts always come from the knowledge base at `simple` level in the reader's language, never from the
 * texts stored with the result (a REST result may be stored at another level or in another language).
 */
export function viewOf(
  stored: StoredResult,
  language: Language,
  kb: ViewKnowledge,
  options: ViewOptions = {},
): ResultView {
  const { result, code } = stored;
  const officer = options.officerReview?.(stored) ?? false;
  const issue = result.image_analysis.quality_issue;
  if (issue) return { kind: "retake", issue };
  const best = result.candidates[0];
  switch (result.outcome) {
    case "not_plant":
      return { kind: "retake", issue: "not_plant" };
    case "no_model":
      return { kind: "no_model" };
    case "crop_not_supported":
      return { kind: "crop_not_supported", code, officer };
    case "healthy":
      return {
        kind: "healthy",
        code,
        name: best && known(() => kb.name(best.id, language)),
        band: bandOf(best?.confidence ?? 0),
      };
    case "unsure":
      return { kind: "unsure", code, guess: best && known(() => kb.name(best.id, language)), officer };
    case "diagnosed": {
      const top = result.diagnoses[0];
      const described = top && known(() => kb.describe(top.id, language, "simple"));
      const treatment = top && known(() => kb.treatment([top.id], language, "simple"));
      if (!top || !described || !treatment) return { kind: "unsure", code, guess: undefined, officer };
      return {
        kind: "diagnosis",
        code,
        name: described.name,
        band: bandOf(top.confidence),
        urgency: described.urgency,
        description: described.description,
        actions: treatment.immediate_actions,
        prevention: treatment.prevention,
        officer,
      };
    }
  }
}

/** Splits prose into sentences, each ending with its punctuation, so cuts never fall mid-sentence. */
export function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** List items become sentences of their own. */
export function asSentence(item: string): string {
  const trimmed = item.trim();
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}
