import type { i18n as I18n } from "i18next";
import { beforeAll, describe, expect, it } from "vitest";
import { CLASS_IDS, requireEntry } from "../../../src/diagnosis/knowledge/entries.js";
import { createI18n } from "../../../src/diagnosis/knowledge/i18n.js";
import { describe as describeClass } from "../../../src/diagnosis/knowledge/lookup.js";
import { ORGANISMS } from "../../../src/diagnosis/knowledge/regions.js";
import { CATEGORIES, CROPS, URGENCIES } from "../../../src/diagnosis/types.js";

const entries = CLASS_IDS.map((id) => [id, requireEntry(id)] as const);

let i18n: I18n;
beforeAll(async () => {
  i18n = await createI18n();
});

describe("language-independent facts (diseases.json)", () => {
  it("uses well-formed EPPO codes: a 5-6 character organism code, or EPPO's 1xxxxX form for a higher taxon", () => {
    for (const [id, e] of entries) {
      expect(e.eppo_code, id).toMatch(/^(?:[A-Z][A-Z0-9]{4,5}|1[A-Z]{4}[A-Z])$/);
      // A higher-taxon code is never the organism's own: the entry must say which taxon it stands for.
      if (e.eppo_code.startsWith("1")) expect(e.eppo_taxon, id).toBeTruthy();
      if (e.eppo_candidate) expect(e.eppo_candidate, id).toMatch(/^[A-Z][A-Z0-9]{4,5}$/);
    }
  });

  it("serves only EPPO codes that were checked, never a candidate written from memory", () => {
    for (const [id, e] of entries) {
      expect(e.eppo_verified, `${id}: ${e.eppo_code} awaits a check on gd.eppo.int`).toBe(true);
      expect(e.eppo_code, id).not.toBe(e.eppo_candidate);
      if (e.healthy) continue;
      expect(describeClass(id, "en", "expert", i18n).eppo_code, id).toBe(e.eppo_code);
    }
    // The three codes the audit could not confirm stay out of the answers until someone checks them.
    for (const [id, candidate] of [
      ["bean__angular_leaf_spot", "PHAEGR"],
      ["rice__leaf_smut", "ENTYOR"],
      ["tomato__leaf_mold", "CLADFU"],
    ] as const) {
      expect(requireEntry(id).eppo_candidate, id).toBe(candidate);
      expect(describeClass(id, "en", "simple", i18n).eppo_code, id).not.toBe(candidate);
    }
  });

  it("pairs each EPPO code with one EPPO taxon, and each organism with one code, across classes and crops", () => {
    const taxonOf = new Map<string, string>();
    const codeOf = new Map<string, string>();
    for (const [id, e] of entries) {
      const taxon = e.eppo_taxon ?? e.scientific_name;
      expect(taxonOf.get(e.eppo_code) ?? taxon, `${id}: ${e.eppo_code}`).toBe(taxon);
      expect(codeOf.get(e.scientific_name) ?? e.eppo_code, `${id}: ${e.scientific_name}`).toBe(e.eppo_code);
      taxonOf.set(e.eppo_code, taxon);
      codeOf.set(e.scientific_name, e.eppo_code);
      // An organism-level code serves one organism only; only a higher taxon may cover several classes' causes.
      if (!e.eppo_taxon) {
        const others = entries.filter(([, o]) => o.eppo_code === e.eppo_code && !o.eppo_taxon);
        expect(new Set(others.map(([, o]) => o.scientific_name)).size, id).toBe(1);
      }
    }
    // The one organism the brief names as shared: late blight on tomato and potato.
    expect(requireEntry("tomato__late_blight").eppo_code).toBe(requireEntry("potato__late_blight").eppo_code);
    // Bacterial spot is a different Xanthomonas on tomato (pv. perforans dominates) than on pepper.
    expect(requireEntry("tomato__bacterial_spot").eppo_code).not.toBe(
      requireEntry("pepper__bacterial_spot").eppo_code,
    );
  });

  it("keeps category and urgency in the design's value sets, and null for healthy classes", () => {
    for (const [id, e] of entries) {
      expect(CROPS, id).toContain(e.crop);
      expect(id.startsWith(`${e.crop}__`), id).toBe(true);
      if (e.healthy) {
        expect(id.endsWith("__healthy"), id).toBe(true);
        expect(e.category, id).toBeNull();
        expect(e.urgency, id).toBeNull();
      } else {
        expect(CATEGORIES, id).toContain(e.category);
        expect(URGENCIES, id).toContain(e.urgency);
        expect(e.affected_parts.length, id).toBeGreaterThan(0);
      }
    }
  });

  it("names a healthy class by its crop's own EPPO code, the same code for every class of that crop", () => {
    // The model has no healthy rice class, so rice is the one crop without such an entry.
    const cropCodes: Record<string, [string, string]> = {
      bean: ["Phaseolus vulgaris", "PHSVX"],
      maize: ["Zea mays", "ZEAMX"],
      pepper: ["Capsicum annuum", "CPSAN"],
      potato: ["Solanum tuberosum", "SOLTU"],
      tomato: ["Solanum lycopersicum", "LYPES"],
    };
    const healthy = entries.filter(([, e]) => e.healthy);
    expect(healthy.map(([, e]) => e.crop).sort()).toEqual(Object.keys(cropCodes).sort());
    for (const [id, e] of healthy) {
      expect([e.scientific_name, e.eppo_code], id).toEqual(cropCodes[e.crop]);
      // The reassurance and scouting advice come from agronomy, not from the code list: cite where.
      expect(
        e.sources.some((s) => !new URL(s.url).hostname.endsWith("eppo.int")),
        `${id} cites an extension or FAO source`,
      ).toBe(true);
    }
  });

  it("cites the EPPO page of each code, and only https/http URLs", () => {
    for (const [id, e] of entries) {
      expect(
        e.sources.map((s) => s.url),
        id,
      ).toContain(`https://gd.eppo.int/taxon/${e.eppo_code}`);
      for (const url of [...e.reference_images, ...e.sources.map((s) => s.url)])
        expect(url, id).toMatch(/^https?:\/\/\S+$/);
      expect(e.reference_images.length, id).toBeGreaterThan(0);
      for (const s of e.sources) expect(s.title.trim(), id).not.toBe("");
    }
  });

  it("has a distribution record for every organism code, under the code's taxon, and none for higher taxa", () => {
    for (const [id, e] of entries) {
      if (e.healthy) continue;
      const range = ORGANISMS[e.eppo_code];
      if (e.eppo_code.startsWith("1")) {
        expect(range, `${id}: a phylum or kingdom has no distribution`).toBeUndefined();
        continue;
      }
      expect(range, `${id}: regions.json has ${e.eppo_code}`).toBeDefined();
      expect(range?.scientific_name, id).toBe(e.eppo_taxon ?? e.scientific_name);
      expect(range?.source, id).toBe(`https://gd.eppo.int/taxon/${e.eppo_code}/distribution`);
    }
    for (const code of Object.keys(ORGANISMS)) {
      expect(
        entries.some(([, e]) => e.eppo_code === code),
        `${code} is the code of a served diagnosis`,
      ).toBe(true);
    }
  });

  it("never lists a country as both present and absent, and uses upper-case ISO codes", () => {
    for (const [code, range] of Object.entries(ORGANISMS)) {
      for (const c of [...range.present, ...range.absent]) expect(c, code).toMatch(/^[A-Z]{2}$/);
      expect(
        range.present.filter((c) => range.absent.includes(c)),
        code,
      ).toEqual([]);
    }
  });
});
