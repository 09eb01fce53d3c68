import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { loadConfig } from "./config.js";
import type { Logger } from "./diagnosis/analyse.js";
import { createDiagnoser } from "./diagnosis/diagnose.js";
import { ImageError } from "./diagnosis/diagnoser.js";
import { DETAIL_LEVELS, type DetailLevel, LANGUAGES, type Language } from "./diagnosis/types.js";

const USAGE = `Usage: npm run diagnose -- photo.jpg [--crop tomato] [--region KE] [--language sw]
                            [--detail-level simple|standard|expert] [--bbox]

Prints the same JSON result as POST /diagnosis/. No server, no Redis.`;

// stdout carries the JSON only; why the model is unavailable goes to stderr.
const stderrLogger: Logger = {
  info: () => {},
  warn: (_, msg) => console.error(`warning: ${msg}`),
  error: (obj, msg) => console.error(`error: ${msg}`, obj),
};

/** A mistake in the command line or the photo: exit code 2, like the API's 400/422. */
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
  const image = await readFile(file).catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`cannot read ${file}: ${error.code === "ENOENT" ? "no such file" : error.message}`);
  });
  const language: Language = oneOf(values.language, LANGUAGES, "fr", "language");
  const detailLevel: DetailLevel = oneOf(values["detail-level"], DETAIL_LEVELS, "standard", "detail-level");

  const config = loadConfig();
  const diagnoser = await createDiagnoser({ modelPath: config.modelPath, threads: 1, logger: stderrLogger });
  try {
    const result = await diagnoser.diagnose(
      image,
      {
        cropType: values.crop,
        region: values.region,
        language,
        detailLevel,
        includeBbox: values.bbox ?? false,
      },
      randomUUID(),
    );
    console.log(JSON.stringify(result, null, 2));
  } catch (error) {
    if (error instanceof ImageError) throw new UsageError(`${file}: ${error.message} (${error.code})`);
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
      language: { type: "string" },
      "detail-level": { type: "string" },
      bbox: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) {
    console.error(`error: ${error.message}\n\n${USAGE}`);
    process.exitCode = 2;
  } else {
    console.error(error);
    process.exitCode = 1;
  }
});
