/**
 * `npm run bench`: the API bench (bench/api.ts), the core bench (bench/core.ts) and, when present, the
 * channels bench (bench/channels.ts, run as its own process: it prints its markdown). Prints everything and
 * writes it between the bench markers of README.md (its Performance section), keeping the rest of the file.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { formatApiBench, runApiBench } from "./api.js";
import { formatCoreBench, runCoreBench } from "./core.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const REPORT = path.join(ROOT, "README.md");
const START = "<!-- bench:start -->";
const END = "<!-- bench:end -->";

const sections: string[] = [];
const machine = `${os.cpus().length} × ${os.cpus()[0]?.model ?? "CPU"}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`;
sections.push(`Measured ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC on ${machine}.`);

sections.push(`### REST API\n\n${formatApiBench(await runApiBench())}`);
sections.push(`### Diagnosis core\n\n${formatCoreBench(await runCoreBench())}`);
const channelsBench = path.join(ROOT, "bench", "channels.ts");
if (existsSync(channelsBench)) {
  const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", channelsBench], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  const output = stdout.trim();
  // Markdown is kept as printed; anything else (e.g. JSON) is shown verbatim.
  sections.push(
    `### Channels\n\n${output.startsWith("|") || output.startsWith("#") ? output : `\`\`\`\n${output}\n\`\`\``}`,
  );
}

const block = `${START}\n${sections.join("\n\n")}\n${END}`;
console.log(block);

const current = await readFile(REPORT, "utf8");
const before = current.indexOf(START);
const after = current.indexOf(END);
const updated =
  before >= 0 && after > before
    ? current.slice(0, before) + block + current.slice(after + END.length)
    : `${current.trimEnd()}\n\n${block}\n`;
await writeFile(REPORT, updated);
console.log(`\nWritten to ${path.relative(ROOT, REPORT)}`);
