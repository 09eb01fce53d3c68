import type { Language, QualityIssue, Urgency } from "../../../src/diagnosis/types.js";
import type { StoredResult } from "../../../src/results/types.js";

/** Simple-level knowledge texts for one class, in any language: lets a stored result be re-rendered. */
export interface SimpleKnowledge {
  describe(classId: string, language: Language): { name: string; description: string } | undefined;
  treatment(
    classIds: string[],
    language: Language,
  ): { immediateActions: string[]; prevention: string[] } | undefined;
}

export type ResultView =
  | { kind: "not_plant" | "healthy" | "uncertain"; code: string }
  | { kind: "quality"; issue: QualityIssue; code: string }
  | {
      kind: "diagnosis";
      code: string;
      name: string;
      confidence: number;
      urgency: Urgency;
      description: string;
      actions: string[];
      prevention: string[];
    };

/**
 * What a farmer is told about a stored result. Texts come from the knowledge base at `simple` level in the
 * reader's language (a REST result may be stored at another level or language); the stored texts are the
 * fallback when the knowledge base lacks the class.
 */
export function viewOf(stored: StoredResult, language: Language, knowledge?: SimpleKnowledge): ResultView {
  const { result, code } = stored;
  if (result.image_analysis.quality_issue)
    return { kind: "quality", issue: result.image_analysis.quality_issue, code };
  if (!result.image_analysis.is_plant) return { kind: "not_plant", code };
  if (result.crop_health === "healthy") return { kind: "healthy", code };
  const top = result.diagnoses[0];
  if (result.crop_health !== "unhealthy" || !top) return { kind: "uncertain", code };

  const described = knowledge?.describe(top.id, language);
  const treated = knowledge?.treatment([top.id], language);
  return {
    kind: "diagnosis",
    code,
    name: described?.name ?? top.name,
    confidence: Math.round(top.confidence * 100),
    urgency: top.urgency,
    description: described?.description ?? top.description,
    actions: treated?.immediateActions ?? result.treatment.immediate_actions,
    prevention: treated?.prevention ?? result.treatment.prevention,
  };
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
