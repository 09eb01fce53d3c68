import { readFileSync } from "node:fs";
import { CATEGORIES, type Category, CROPS, type Crop, URGENCIES, type Urgency } from "../types.js";

/** One class of the model in the language-independent part of the knowledge base (diseases.json). */
export interface KbEntry {
  crop: Crop;
  healthy: boolean;
  /** Pathogen or pest; for a healthy class, the crop itself. */
  scientific_name: string;
  /**
   * The code the API serves. It must have been checked on an EPPO site: a code written from memory is never
   * served as fact. Where the organism's own code could not be checked, this is the code of the nearest
   * checked taxon containing it (a genus, phylum or kingdom code in EPPO's `1xxxxX` form, or the broader
   * species concept it was classified under), named in `eppo_taxon`.
   */
  eppo_code: string;
  /** False where the served code itself still awaits a check: `npm run kb:report` fails until it is done. */
  eppo_verified: boolean;
  /** EPPO's name of the taxon `eppo_code` stands for, present only when that is not `scientific_name`. */
  eppo_taxon?: string;
  /** The organism's own code as written from memory, never served: a reviewer checks it on gd.eppo.int. */
  eppo_candidate?: string;
  category: Category | null;
  urgency: Urgency | null;
  affected_parts: string[];
  reference_images: string[];
  sources: { title: string; url: string }[];
}

export class KnowledgeError extends Error {
  override name = "KnowledgeError";
}

// Read once at import: the file is small, and a broken entry should stop start-up, not one request later.
const raw: unknown = JSON.parse(readFileSync(new URL("./diseases.json", import.meta.url), "utf8"));
const entries = validate(raw);

/** Every class id the knowledge base describes, in file order (the model's `non_plant` is not one). */
export const CLASS_IDS: readonly string[] = Object.freeze(Object.keys(entries));

export function getEntry(classId: string): KbEntry | undefined {
  return Object.hasOwn(entries, classId) ? entries[classId] : undefined;
}

/** For callers that were handed a class id by the model: an unknown one is a model/knowledge mismatch. */
export function requireEntry(classId: string): KbEntry {
  const entry = getEntry(classId);
  if (!entry) throw new KnowledgeError(`no knowledge-base entry for class "${classId}"`);
  return entry;
}

// A JSON file edited by hand (and later by translators' tooling) cannot be trusted to match the types.
function validate(data: unknown): Record<string, KbEntry> {
  if (!isRecord(data)) throw new KnowledgeError("diseases.json: expected an object keyed by class id");
  for (const [id, e] of Object.entries(data)) {
    const fail = (what: string) => {
      throw new KnowledgeError(`diseases.json: ${id}: ${what}`);
    };
    if (!isRecord(e)) fail("expected an object");
    const entry = e as Record<string, unknown>;
    if (!CROPS.includes(entry.crop as Crop)) fail(`unknown crop ${String(entry.crop)}`);
    if (!id.startsWith(`${String(entry.crop)}__`)) fail("class id does not start with its crop");
    if (typeof entry.healthy !== "boolean") fail("healthy must be a boolean");
    for (const key of ["scientific_name", "eppo_code"]) {
      if (typeof entry[key] !== "string" || entry[key] === "") fail(`${key} must be a non-empty string`);
    }
    if (typeof entry.eppo_verified !== "boolean") fail("eppo_verified must be a boolean");
    for (const key of ["eppo_taxon", "eppo_candidate"]) {
      if (key in entry && (typeof entry[key] !== "string" || entry[key] === ""))
        fail(`${key}, when given, must be a non-empty string`);
    }
    if (entry.healthy) {
      if (entry.category !== null || entry.urgency !== null)
        fail("a healthy class has no category or urgency");
    } else {
      if (!CATEGORIES.includes(entry.category as Category))
        fail(`unknown category ${String(entry.category)}`);
      if (!URGENCIES.includes(entry.urgency as Urgency)) fail(`unknown urgency ${String(entry.urgency)}`);
    }
    for (const key of ["affected_parts", "reference_images", "sources"]) {
      if (!Array.isArray(entry[key])) fail(`${key} must be an array`);
    }
  }
  return data as Record<string, KbEntry>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
