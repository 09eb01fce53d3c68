import { execFile } from "node:child_process";
import { copyFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ROOT_DIR } from "../../src/config.js";
import { createKnowledge } from "../../src/diagnosis/kb.js";
import { createRecords } from "../../src/results/records.js";
import { createStaffStore } from "../../src/staff/accounts.js";
import { testApp } from "./support/app.js";

// /openapi.json as a partner's tooling reads it: Redocly CLI's recommended rules, errors and warnings alike.
// Only the spec's two trailing-slash paths are exempt (test/api/openapi-lint/.redocly.lint-ignore.yaml).
const LINT_DIR = path.join(ROOT_DIR, "test/api/openapi-lint");

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: { ruleId: string; message: string }[];
}

async function lint(spec: string): Promise<LintReport> {
  const dir = await mkdtemp(path.join(tmpdir(), "openapi-lint-"));
  try {
    await writeFile(path.join(dir, "openapi.json"), spec);
    for (const file of ["redocly.yaml", ".redocly.lint-ignore.yaml"])
      await copyFile(path.join(LINT_DIR, file), path.join(dir, file));
    const { stdout } = await promisify(execFile)(
      path.join(ROOT_DIR, "node_modules/.bin/redocly"),
      ["lint", "--format=json", "openapi.json"],
      // Offline: no telemetry, no update check.
      { cwd: dir, env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" } },
    );
    return JSON.parse(stdout) as LintReport;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("/openapi.json", () => {
  it("passes `redocly lint` with the recommended rules, warnings included", async () => {
    const { app } = await testApp({ env: { PUBLIC_BASE_URL: "https://crops.example.org" } });
    try {
      const report = await lint((await app.inject({ url: "/openapi.json" })).body);
      expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
      expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 2 });
    } finally {
      await app.close();
    }
  }, 60_000);

  it("passes it too with the results API and the console (as src/server.ts builds the app)", async () => {
    const { app } = await testApp({
      env: { PUBLIC_BASE_URL: "https://crops.example.org" },
      deps: {
        records: createRecords(undefined),
        staff: createStaffStore(undefined, { file: path.join(tmpdir(), "no-staff.json") }),
        knowledge: await createKnowledge(),
      },
    });
    try {
      const spec = (await app.inject({ url: "/openapi.json" })).body;
      expect(JSON.parse(spec).paths["/results/{id}"].get.operationId).toBe("getResult");
      const report = await lint(spec);
      expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    } finally {
      await app.close();
    }
  }, 60_000);
});
