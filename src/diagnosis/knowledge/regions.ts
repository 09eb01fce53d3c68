import { readFileSync } from "node:fs";
import { LANGUAGES } from "../types.js";

export type Presence = "present" | "absent" | "unknown";

interface OrganismRange {
  scientific_name: string;
  worldwide: boolean;
  present: string[];
  absent: string[];
  source: string;
  note?: string;
}

interface RegionsFile {
  organisms: Record<string, OrganismRange>;
  aliases: {
    groups: Record<string, { codes: string[]; names: string[] }>;
    countries: Record<string, string[]>;
  };
}

const data = JSON.parse(readFileSync(new URL("./regions.json", import.meta.url), "utf8")) as RegionsFile;

export const ORGANISMS: Readonly<Record<string, OrganismRange>> = data.organisms;

// Intl knows codes that are not countries (EU, UN, QO, pseudo-locales, exceptional reservations):
// a region that resolves to one of them could never match a distribution record.
const NOT_COUNTRIES = new Set([
  "AC",
  "CP",
  "CQ",
  "DG",
  "EA",
  "EU",
  "EZ",
  "IC",
  "QO",
  "TA",
  "UN",
  "XA",
  "XB",
  "XK",
  "ZZ",
]);

/** Current ISO 3166-1 alpha-2 codes, as the runtime's ICU data knows them. */
export const COUNTRY_CODES: ReadonlySet<string> = new Set(isoCodes());

// Names in every service language come from ICU, so "Kenya", "Quénia", "Kenia" need no table of ours;
// regions.json only adds groups ("East Africa") and informal or old names ("DRC", "Ivory Coast").
const aliases = buildAliases();

export interface ResolvedRegion {
  codes: string[];
  /** The caller's own wording, trimmed: it is already in the caller's language, unlike any name of ours. */
  label: string;
}

/**
 * Country codes for a free-text region: an ISO code ("KE"), a country or region name in any service language
 * ("kenya", "Afrique de l'Est", "Brasil"), or a place followed by one ("Nakuru, Kenya"). Null when nothing
 * matches, so the caller can say the region was not used rather than guess.
 */
export function resolveRegion(text: string): ResolvedRegion | null {
  const label = text.trim();
  if (!label) return null;
  if (/^[A-Za-z]{2}$/.test(label) && COUNTRY_CODES.has(label.toUpperCase())) {
    return { codes: [label.toUpperCase()], label };
  }
  const parts = [label, ...label.split(/[,;/()|]+/).reverse()];
  for (const part of parts) {
    const codes = aliases.get(normalise(part));
    if (codes) return { codes: [...codes], label };
  }
  return null;
}

/**
 * Whether an organism is reported in a set of countries. For a group of countries one record of presence
 * is enough, while "absent" needs every country to be absent: only "absent" may lower a diagnosis, so it is
 * the one answer that has to be certain.
 */
export function presence(eppoCode: string, countryCodes: string[]): Presence {
  const range = Object.hasOwn(ORGANISMS, eppoCode) ? ORGANISMS[eppoCode] : undefined;
  const codes = countryCodes.map((c) => c.toUpperCase());
  if (!range || codes.length === 0) return "unknown";
  const absent = new Set(range.absent);
  if (codes.every((c) => absent.has(c))) return "absent";
  if (range.worldwide || codes.some((c) => range.present.includes(c))) return "present";
  return "unknown";
}

export function normalise(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, " ")
    .trim();
}

function isoCodes(): string[] {
  const names = new Intl.DisplayNames(["en"], { type: "region", fallback: "none" });
  const codes: string[] = [];
  for (let a = 65; a <= 90; a++) {
    for (let b = 65; b <= 90; b++) {
      const code = String.fromCharCode(a, b);
      if (NOT_COUNTRIES.has(code) || !names.of(code)) continue;
      // Deprecated codes (BU, ZR…) canonicalise to their successor: keep only the current one.
      if (new Intl.Locale(`und-${code}`).region === code) codes.push(code);
    }
  }
  return codes;
}

function buildAliases(): Map<string, string[]> {
  const map = new Map<string, string[]>();
  const add = (name: string, codes: string[]) => {
    const key = normalise(name);
    if (key && !map.has(key)) map.set(key, codes);
  };
  // Our own entries first: where ICU and we disagree on a name, ours was written on purpose.
  for (const group of Object.values(data.aliases.groups)) {
    for (const name of group.names) add(name, group.codes);
  }
  for (const [code, names] of Object.entries(data.aliases.countries)) {
    for (const name of names) add(name, [code]);
  }
  for (const language of LANGUAGES) {
    const names = new Intl.DisplayNames([language], { type: "region", fallback: "none" });
    for (const code of COUNTRY_CODES) {
      const name = names.of(code);
      if (!name) continue;
      add(name, [code]);
      // "Myanmar (Burma)", "Congo (RDC)": people type the part before the brackets.
      add(name.replace(/\s*\(.*\)\s*/g, " "), [code]);
    }
  }
  return map;
}
