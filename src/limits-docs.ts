// `npm run docs:limits`: writes src/limits.ts's table into docs/api.md (between its limits markers), so the
// documented defaults are the ones the code uses. test/api/limits-docs.test.ts fails while they differ.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ROOT_DIR } from "./config.js";
import { limitsTable } from "./limits.js";

export const LIMITS_DOC = path.join(ROOT_DIR, "docs/api.md");
const START = "<!-- limits:start (npm run docs:limits) -->";
const END = "<!-- limits:end -->";

/** The document with its limits block replaced by the current table. */
export function withLimitsTable(markdown: string): string {
  const from = markdown.indexOf(START);
  const to = markdown.indexOf(END);
  if (from < 0 || to < from) throw new Error(`docs/api.md lacks the markers ${START} ... ${END}`);
  return `${markdown.slice(0, from + START.length)}\n${limitsTable()}\n${markdown.slice(to)}`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await writeFile(LIMITS_DOC, withLimitsTable(await readFile(LIMITS_DOC, "utf8")));
}
