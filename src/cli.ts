import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "./config.js";
import type { Logger } from "./diagnosis/analyse.js";
import { ImageError } from "./diagnosis/diagnoser.js";
import { DETAIL_LEVELS, type DetailLevel, LANGUAGES, type Language } from "./diagnosis/types.js";
import { FieldValidationError } from "./http-errors.js";
import { TEXT_LIMITS } from "./schemas/request.js";
import { parseUserData } from "./schemas/user-data.js";

const USAGE = `Usage: npm run diagnose -- photo.jpg [--crop tomato] [--region KE] [--growth-stage flowering]
                            [--description "brown spots"] [--language sw]
                            [--detail-level simple|standard|expert] [--bbox] [--user-data '{"device":"cli"}']

Prints the same JSON result as POST /diagnosis/ with the same form fields. No server, no Redis.
Exit status: 0 on success, 1 when the photo is unusable or the service cannot run, 2 for a usage mistake.`;

// stdout carries the JSON only; why the model is unavailable goes to stderr, one line each, no stack.
const stderrLogger: Logger = {
  info: () => {},
  warn: (_, msg) => console.error(`warning: ${msg}`),
  error: (obj, msg) => {
    const err = (obj as { err?: unknown }).err;
    console.error(`error: ${msg}${err instanceof Error ? ` (${err.message})` : ""}`);
  },
};

/** A mistake in the command line: exit code 2, like the API's 422. Anything else thrown is exit code 1. */
class UsageError extends Error {}

function oneOf<T extends string>(
  value: string | undefined,
  allowed: readonly T[],
  fallback: T,
  flag: string,
): T {
  if (value === undefined) return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new UsageError(`--${flag} must be one of ${allowed.join(", ")} (got "${value}")`);
}

/** The API's rules for its free-text fields: empty means not given, and each has a length limit. */
function text(value: string | undefined, field: keyof typeof TEXT_LIMITS, flag: string): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (value.length > TEXT_LIMITS[field]) {
    throw new UsageError(`--${flag} should have at most ${TEXT_LIMITS[field]} characters`);
  }
  return value;
}

/** Checked by the API's own rules; the command line never sends the result anywhere. */
function checkUserData(raw: string | undefined): void {
  try {
    parseUserData(raw);
  } catch (error) {
    if (!(error instanceof FieldValidationError)) throw error;
    throw new UsageError(`--user-data: ${error.problems.map((p) => p.msg).join("; ")}`);
  }
}

async function main(argv: string[]): Promise<void> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    return;
  }
  if (positionals.length !== 1) throw new UsageError("give exactly one photo");
  const file = positionals[0]!;
  const language: Language = oneOf(values.language, LANGUAGES, "fr", "language");
  const detailLevel: DetailLevel = oneOf(values["detail-level"], DETAIL_LEVELS, "standard", "detail-level");
  const context = {
    cropType: text(values.crop, "crop_type", "crop"),
    region: text(values.region, "region", "region"),
    growthStage: text(values["growth-stage"], "growth_stage", "growth-stage"),
    description: text(values.description, "description", "description"),
    language,
    detailLevel,
    includeBbox: values.bbox ?? false,
  };
  checkUserData(values["user-data"]);
  const image = await readFile(file).catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`cannot read ${file}: ${error.code === "ENOENT" ? "no such file" : error.message}`);
  });

  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) throw new Error(`invalid configuration: ${error.problems.join("; ")}`);
    throw error;
  }
  // Loaded only now: sharp, ONNX Runtime and the knowledge base take a while, and a typo needs none of them.
  const { createDiagnoser } = await import("./diagnosis/diagnose.js");
  const diagnoser = await createDiagnoser({ modelPath: config.modelPath, threads: 1, logger: stderrLogger });
  try {
    const result = await diagnoser.diagnose(image, context, randomUUID());
    console.log(JSON.stringify(result, null, 2));
  } catch (error) {
    if (error instanceof ImageError) throw new Error(`${file}: ${error.message}`);
    throw error;
  } finally {
    await diagnoser.close();
  }
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      crop: { type: "string" },
      region: { type: "string" },
      "growth-stage": { type: "string" },
      description: { type: "string" },
      language: { type: "string" },
      "detail-level": { type: "string" },
      bbox: { type: "boolean" },
      "user-data": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    console.error(`error: ${error.message}\n\n${USAGE}`);
    process.exitCode = 2;
  } else {
    // An unusable photo, a bad environment or a fault: one line for whoever runs the command, no stack.
    console.error(`error: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  }
});
