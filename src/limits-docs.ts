// `npm run docs:limits`: writes src/limits.ts's tables into docs/api.md and docs/console.md, and
// channels/limits.ts's into docs/channels.md (between their markers), so the documented values are the ones
// the code uses. Tests fail while they differ.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { channelLimitsTable } from "../channels/limits.js";
import { ROOT_DIR } from "./config.js";
import { expertLoopTable, limitsTable } from "./limits.js";

export const LIMITS_DOC = path.join(ROOT_DIR, "docs/api.md");
export const CONSOLE_DOC = path.join(ROOT_DIR, "docs/console.md");
export const CHANNELS_DOC = path.join(ROOT_DIR, "docs/channels.md");

/** The document with the block between `<!-- name:start ... -->` and `<!-- name:end -->` set to `table`. */
function withBlock(markdown: string, name: string, file: string, table: string): string {
  const start = `<!-- ${name}:start (npm run docs:limits) -->`;
  const end = `<!-- ${name}:end -->`;
  const from = markdown.indexOf(start);
  const to = markdown.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${file} lacks the markers ${start} ... ${end}`);
  return `${markdown.slice(0, from + start.length)}\n${table}\n${markdown.slice(to)}`;
}

/** docs/api.md with its limits block replaced by the current table. */
export const withLimitsTable = (markdown: string) =>
  withBlock(markdown, "limits", "docs/api.md", limitsTable());

/** docs/console.md with its rules block replaced by the current table. */
export const withConsoleTable = (markdown: string) =>
  withBlock(markdown, "console-limits", "docs/console.md", expertLoopTable());

/** docs/channels.md with its limits block replaced by the current table. */
export const withChannelTable = (markdown: string) =>
  withBlock(markdown, "channel-limits", "docs/channels.md", channelLimitsTable());

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await writeFile(LIMITS_DOC, withLimitsTable(await readFile(LIMITS_DOC, "utf8")));
  await writeFile(CONSOLE_DOC, withConsoleTable(await readFile(CONSOLE_DOC, "utf8")));
  await writeFile(CHANNELS_DOC, withChannelTable(await readFile(CHANNELS_DOC, "utf8")));
}
