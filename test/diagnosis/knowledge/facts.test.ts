import { describe, expect, it } from "vitest";
import { CLASS_IDS, requireEntry } from "../../../src/diagnosis/knowledge/entries.js";
import { ORGANISMS } from "../../../src/diagnosis/knowledge/regions.js";
import { CATEGORIES, CROPS, URGENCIES } from "../../../src/diagnosis/types.js";

const entries = CLASS_IDS.map((id) => [id, requireEntry(id)] as const);

describe("language-independent facts (diseases.json)", () => {
  it("uses well-formed EPPO codes", () => {
    for (const [id, e] of entries) expect(e.eppo_code, id).toMatch(/^[A-Z0-9]{5,6}$/);
  });

  it("pairs each EPPO code with exactly one scientific name, across classes and crops", () => {
    const nameOf = new Map<string, string>();
    const codeOf = new Map<string, string>();
    for (const [id, e] of entries) {
      expect(nameOf.get(e.eppo_code) ?? e.scientific_name, `${id}: ${e.eppo_code}`).toBe(e.scientific_name);
      expect(codeOf.get(e.scientific_name) ?? e.eppo_code, `${id}: ${e.scientific_name}`).toBe(e.eppo_code);
      nameOf.set(e.eppo_code, e.scientific_name);
      codeOf.set(e.scientific_name, e.eppo_code);
    }
    // The one organism the brief names as shared: late blight on tomato and potato.
    expect(requireEntry("tomato__late_blight").eppo_code).toBe(requireEntry("potato__late_blight").eppo_code);
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
    for (const [id, e] of healthy) expect([e.scientific_name, e.eppo_code], id).toEqual(cropCodes[e.crop]);
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

  it("has a distribution record for every organism, under the same scientific name", () => {
    for (const [id, e] of entries) {
      if (e.healthy) continue;
      const range = ORGANISMS[e.eppo_code];
      expect(range, `${id}: regions.json has ${e.eppo_code}`).toBeDefined();
      expect(range?.scientific_name, id).toBe(e.scientific_name);
      expect(range?.source, id).toBe(`https://gd.eppo.int/taxon/${e.eppo_code}/distribution`);
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
