import type { i18n as I18n } from "i18next";
import { DETAIL_LEVELS, LANGUAGES, type Language } from "../types.js";
import { CLASS_IDS, requireEntry } from "./entries.js";
import { createI18n, DISEASES_NS, NOTES_NS } from "./i18n.js";
import { TREATMENT_KEYS } from "./lookup.js";
import { smsBudget, smsCore } from "./sms-core.js";

// `npm run kb:report`: one screen a reviewer (or a translator) reads to see what is missing, what is too long
// for SMS, how long each text is per language and level, and which EPPO codes still await a check. Exit
// status 1 when a text is missing or over the SMS budget, or a code is unverified, so CI can run it too.

const i18n = await createI18n();
let problems = 0;

const LIST_HEADERS: Record<(typeof TREATMENT_KEYS)[number], string> = {
  immediate_actions: "now",
  recommended_products: "prod",
  natural_alternatives: "alt",
  prevention: "prev",
};

const pad = (value: string | number, width: number) => String(value).padEnd(width);
const padL = (value: string | number, width: number) => String(value).padStart(width);

for (const id of CLASS_IDS) {
  const e = requireEntry(id);
  const code = `${e.eppo_code}${e.eppo_taxon ? ` = ${e.eppo_taxon}` : ""}${e.eppo_verified ? "" : " UNVERIFIED"}`;
  const facts = e.healthy
    ? `healthy crop  ${e.scientific_name} [${code}]`
    : `${e.scientific_name} [${code}]  ${e.category}  urgency=${e.urgency}`;
  console.log(`\n${id}\n  ${facts}`);
  if (!e.eppo_verified) problems += 1;
  if (e.eppo_candidate) {
    problems += 1;
    console.log(
      `  EPPO CANDIDATE ${e.eppo_candidate} unverified, not served: check https://gd.eppo.int/taxon/${e.eppo_candidate}`,
    );
  }
  // Lists read "items/characters": a translation that drops an item, or doubles the text, shows at a glance.
  console.log(
    `  ${pad("lang", 5)}${pad("level", 9)}${padL("name", 5)}${padL("desc", 6)}${TREATMENT_KEYS.map((k) => padL(LIST_HEADERS[k], 8)).join("")}${padL("sms", 6)}${padL("seg", 4)}  ${pad("enc", 6)} status`,
  );
  for (const language of LANGUAGES) {
    // A language not translated yet is one line, not three lines of every key.
    if (!text(i18n, `${id}.name`, language) && !i18n.getResource(language, DISEASES_NS, id)) {
      problems += 1;
      console.log(`  ${pad(language, 5)}${pad("all", 9)}${padL("-", 5)}${padL("-", 6)}  MISSING (no entry)`);
      continue;
    }
    for (const level of DETAIL_LEVELS) {
      const missing = missingKeys(i18n, id, language, level);
      const name = text(i18n, `${id}.name`, language);
      const description = text(i18n, `${id}.${level}.description`, language);
      let sms = "";
      let status = missing.length > 0 ? `MISSING ${missing.join(", ")}` : "ok";
      let seg = "";
      let enc = "";
      if (level === "simple" && missing.length === 0) {
        const core = smsCore(name ?? "", {
          description: description ?? "",
          immediate_actions: list(i18n, `${id}.simple.immediate_actions`, language) ?? [],
        });
        const budget = smsBudget(core, language);
        sms = String(core.length);
        seg = String(budget.segments);
        enc = budget.encoding;
        if (!budget.fits) status = "OVER SMS BUDGET";
      }
      if (status !== "ok") problems += 1;
      const lists = TREATMENT_KEYS.map((key) => {
        const items = list(i18n, `${id}.${level}.${key}`, language);
        return padL(items ? `${items.length}/${items.join("").length}` : "-", 8);
      }).join("");
      console.log(
        `  ${pad(language, 5)}${pad(level, 9)}${padL(name?.length ?? "-", 5)}${padL(description?.length ?? "-", 6)}${lists}${padL(sms, 6)}${padL(seg, 4)}  ${pad(enc, 6)} ${status}`,
      );
    }
  }
}

for (const language of LANGUAGES) {
  const notes = i18n.getResourceBundle(language, NOTES_NS) as unknown;
  if (!notes) {
    console.log(`\nnotes: ${language} MISSING`);
    problems += 1;
  }
}

console.log(
  `\n${problems === 0 ? "No problems." : `${problems} problem(s): see MISSING / OVER SMS BUDGET / UNVERIFIED / EPPO CANDIDATE above.`}`,
);
process.exitCode = problems === 0 ? 0 : 1;

function text(i18n: I18n, key: string, language: Language): string | undefined {
  const value: unknown = i18n.getResource(language, DISEASES_NS, key);
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

function list(i18n: I18n, key: string, language: Language): string[] | undefined {
  const value: unknown = i18n.getResource(language, DISEASES_NS, key);
  return Array.isArray(value) ? (value as string[]) : undefined;
}

function missingKeys(i18n: I18n, id: string, language: Language, level: string): string[] {
  const missing: string[] = [];
  if (!text(i18n, `${id}.name`, language)) missing.push("name");
  if (!text(i18n, `${id}.${level}.description`, language)) missing.push("description");
  for (const key of TREATMENT_KEYS) {
    if (!list(i18n, `${id}.${level}.${key}`, language)) missing.push(key);
  }
  return missing;
}
