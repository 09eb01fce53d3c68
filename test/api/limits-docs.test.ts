import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { LIMITS } from "../../src/limits.js";
import { LIMITS_DOC, withLimitsTable } from "../../src/limits-docs.js";

describe("the limits", () => {
  it("are documented in docs/api.md exactly as src/limits.ts defines them (npm run docs:limits)", async () => {
    const doc = await readFile(LIMITS_DOC, "utf8");
    expect(withLimitsTable(doc)).toBe(doc);
  });

  it("are read from the environment with their defaults and bounds", () => {
    const defaults = loadConfig({}).limits;
    for (const [key, limit] of Object.entries(LIMITS)) {
      expect(defaults[key as keyof typeof LIMITS]).toBe(limit.default);
      expect(() => loadConfig({ [limit.env]: String(limit.max + 1) })).toThrow(limit.env);
      expect(loadConfig({ [limit.env]: String(limit.min) }).limits[key as keyof typeof LIMITS]).toBe(
        limit.min,
      );
    }
  });
});
