import { getEntry } from "./knowledge/entries.js";
import { createI18n } from "./knowledge/i18n.js";
import { describe, nameOf, treatment } from "./knowledge/lookup.js";
import { note } from "./knowledge/notes.js";
import { presence, resolveRegion } from "./knowledge/regions.js";
import type { DetailLevel, Diagnosis, Language, Treatment } from "./types.js";

/** A note of the knowledge base's notes table: `unsure`, `crop_mismatch`, `quality.blurry`, … */
export interface NoteRequest {
  key: string;
  params?: Record<string, string>;
}

export interface Region {
  codes: string[];
  label: string;
}

/**
 * What the core needs from the knowledge base (src/diagnosis/knowledge), with its i18n instance bound.
 * Kept as an interface so the core's rules can be read and tested apart from the disease texts.
 */
export interface Knowledge {
  describe(classId: string, language: Language, level: DetailLevel): Omit<Diagnosis, "confidence">;
  /** Any class's common name, healthy ones included. */
  name(classId: string, language: Language): string;
  treatment(classIds: string[], language: Language, level: DetailLevel): Treatment;
  note(request: NoteRequest, language: Language, level: DetailLevel): string;
  isHealthy(classId: string): boolean;
  eppoCode(classId: string): string | null;
  resolveRegion(text: string): Region | null;
  presence(eppoCode: string, countryCodes: string[]): "present" | "absent" | "unknown";
}

/** The knowledge base of src/diagnosis/knowledge behind the core's interface, with one i18next instance. */
export async function createKnowledge(): Promise<Knowledge> {
  const i18n = await createI18n();
  return {
    describe: (classId, language, level) => describe(classId, language, level, i18n),
    name: (classId, language) => nameOf(classId, language, i18n),
    treatment: (classIds, language, level) => treatment(classIds, language, level, i18n),
    note: (request, language, level) => note(request.key, language, level, request.params ?? {}, i18n),
    isHealthy: (classId) => getEntry(classId)?.healthy ?? false,
    eppoCode: (classId) => getEntry(classId)?.eppo_code ?? null,
    resolveRegion,
    presence,
  };
}
