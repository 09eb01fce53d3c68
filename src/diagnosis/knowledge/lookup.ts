import type { i18n } from "i18next";
import {
  type DetailLevel,
  type Diagnosis,
  type Language,
  type Treatment,
  URGENCIES,
  type Urgency,
} from "../types.js";
import { KnowledgeError, requireEntry } from "./entries.js";
import { DISEASES_NS } from "./i18n.js";
import { listOf, textOf } from "./texts.js";

export const TREATMENT_KEYS = [
  "immediate_actions",
  "recommended_products",
  "natural_alternatives",
  "prevention",
] as const;

/** The translated common name of any class, healthy ones included ("Healthy tomato"). */
export function nameOf(classId: string, language: Language, i18n: i18n): string {
  requireEntry(classId);
  return textOf(i18n, DISEASES_NS, `${classId}.name`, language);
}

/** A diagnosis of one class, translated, without the confidence (the model's business, not the texts'). */
export function describe(
  classId: string,
  language: Language,
  level: DetailLevel,
  i18n: i18n,
): Omit<Diagnosis, "confidence"> {
  const entry = requireEntry(classId);
  // A healthy class names no cause: it is reported through crop_health, never as a diagnosis.
  if (entry.healthy || !entry.category || !entry.urgency) {
    throw new KnowledgeError(`class "${classId}" is a healthy class and has no diagnosis`);
  }
  return {
    id: classId,
    scientific_name: entry.scientific_name,
    eppo_code: entry.eppo_code,
    name: nameOf(classId, language, i18n),
    category: entry.category,
    urgency: entry.urgency,
    description: textOf(i18n, DISEASES_NS, `${classId}.${level}.description`, language),
    affected_parts: [...entry.affected_parts],
    reference_images: [...entry.reference_images],
  };
}

/**
 * One treatment plan for the given classes: their advice in the given order (most likely diagnosis first),
 * each item once, so two diagnoses sharing advice (say, the label caution) do not repeat it. The urgency is
 * the highest among them, null when none is a disease (a healthy plant still gets prevention advice).
 */
export function treatment(classIds: string[], language: Language, level: DetailLevel, i18n: i18n): Treatment {
  const lists = Object.fromEntries(TREATMENT_KEYS.map((k) => [k, [] as string[]])) as Record<
    (typeof TREATMENT_KEYS)[number],
    string[]
  >;
  let urgency: Urgency | null = null;
  for (const classId of classIds) {
    const entry = requireEntry(classId);
    for (const key of TREATMENT_KEYS) {
      for (const item of listOf(i18n, DISEASES_NS, `${classId}.${level}.${key}`, language)) {
        if (!lists[key].includes(item)) lists[key].push(item);
      }
    }
    if (!entry.healthy && entry.urgency) urgency = higherUrgency(urgency, entry.urgency);
  }
  return { ...lists, urgency };
}

export function higherUrgency(a: Urgency | null, b: Urgency): Urgency {
  return a === null || URGENCIES.indexOf(b) > URGENCIES.indexOf(a) ? b : a;
}
