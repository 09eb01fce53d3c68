/**
 * npm run eval [-- --limit N] [--quality-limit N] [--threads N] [--split FILE] [--part val|test] [--write]
 *
 * Measures what the API answers: every photo of the fixed test split (or, with --part val, of the val split, for a
 * change of the served path to be judged before the test split is read) goes through the core's public entry point
 * (`createDiagnoser(...).diagnose`), with the crop a farmer would state and without it, and the tables of the
 * model card's "Served-path evaluation" section are read from the results alone. --write puts them into
 * models/README.md between its markers (test only); --limit N measures at most N photos of each source.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { ROOT_DIR } from "../../src/config.js";
import { createDiagnoser } from "../../src/diagnosis/diagnose.js";
import { loadMetadata } from "../../src/diagnosis/model/metadata.js";
import { DATASETS_DIR, MODEL_PATH } from "../../test/diagnosis/helpers.js";
import { type BoxedPhoto, boxTable } from "./boxes.js";
import { calibrationTable } from "./calibration.js";
import { qualityTables } from "./quality.js";
import { rejectionTable } from "./rejection.js";
import { markdownTable, replaceSection, type Table } from "./report.js";
import { type Observation, observe } from "./run.js";
import { byLabel, bySource, isRight, withCropTable, withoutCropTable } from "./sources.js";
import { evenSample, isLeaf, type LeafBoxes, readLeafBoxes, readSplit, SPLIT_FILE } from "./split.js";

const README = path.join(ROOT_DIR, "models", "README.md");

const DEFINITIONS = [
  "Each photo is sent as the API receives it, with `crop_type` = the crop of its true class (other plants: their own name, e.g. `grape`, a crop the service does not cover; non-plant photos: none) and again without `crop_type`.",
  '**Top-1**: the result\'s first candidate (`candidates[0].id`, the best reading after crop narrowing, listed also when the service is unsure) is the photo\'s class; a leaf photo answered "not a plant" or "crop not supported" (no candidates) counts as wrong.',
  "**Answered**: outcome `diagnosed` or `healthy` (the coverage); **right when answered**: its top-1 is right. The other outcomes are `unsure` (candidates listed, no diagnosis), `not_plant` and `crop_not_supported`.",
].join(" ");

function usage(): never {
  console.error(
    "npm run eval [-- --limit N] [--quality-limit N] [--threads N] [--concurrency N] [--split FILE] [--part val|test] [--write]",
  );
  process.exit(2);
}

function positive(value: string | undefined, fallback: number | undefined): number | undefined {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) usage();
  return n;
}

/** A path inside the repository as the repository names it, any other in full. */
function shown(file: string): string {
  const relative = path.relative(ROOT_DIR, file);
  return relative.startsWith("..") ? file : relative;
}

function boxedPhotos(observations: Observation[], leafBoxes: Map<string, LeafBoxes>): BoxedPhoto[] {
  return observations.flatMap(({ sample, withCrop }) => {
    const truth = leafBoxes.get(sample.file);
    if (!truth || withCrop.outcome !== "diagnosed") return [];
    return [
      {
        detections: withCrop.detections ?? [],
        truth: truth.boxes,
        width: truth.width,
        height: truth.height,
        rightDisease: isRight(withCrop, sample.label),
      },
    ];
  });
}

function tablesOf(
  observations: Observation[],
  leafBoxes: Map<string, LeafBoxes>,
  part: "val" | "test",
): Table[] {
  const groups = bySource(observations);
  const boxed = observations.filter((o) => leafBoxes.has(o.sample.file));
  const tables = [
    withCropTable(groups, "source", "Per source, `crop_type` given"),
    withoutCropTable(groups, "source", "Per source, no `crop_type`"),
    rejectionTable(observations),
  ];
  if (boxed.length > 0) {
    tables.push(
      withCropTable(
        byLabel(boxed),
        "class",
        "PlantDoc field photos (field-photos/) per class, `crop_type` given",
      ),
      boxTable(
        boxedPhotos(boxed, leafBoxes),
        `${boxed.length} field-photos/ ${part} photos, \`crop_type\` given`,
      ),
    );
  }
  tables.push(calibrationTable(groups));
  return tables;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      limit: { type: "string" },
      "quality-limit": { type: "string" },
      threads: { type: "string" },
      concurrency: { type: "string" },
      split: { type: "string" },
      part: { type: "string", default: "test" },
      write: { type: "boolean" },
    },
  });
  for (const [need, what] of [
    [DATASETS_DIR, "the datasets (../shared/datasets beside the repository)"],
    [MODEL_PATH, "a model: train and export one first (models/training)"],
  ] as const) {
    if (!existsSync(need)) {
      console.error(`npm run eval needs ${what}: nothing at ${need}`);
      process.exit(2);
    }
  }
  const part = values.part;
  if (part !== "val" && part !== "test") usage();
  if (values.write && part !== "test") {
    console.error(
      "--write records the test split in the model card; val figures are for choosing, and only printed",
    );
    process.exit(2);
  }
  const limit = positive(values.limit, undefined);
  const threads = positive(values.threads, 1)!;
  const concurrency = positive(values.concurrency, 2 * threads)!;
  const splitFile = path.resolve(values.split ?? SPLIT_FILE);
  const all = readSplit(splitFile, part);
  const samples = evenSample(all, limit);
  const leafBoxes = readLeafBoxes(DATASETS_DIR);
  const metadata = await loadMetadata(MODEL_PATH);
  const diagnoser = await createDiagnoser({ modelPath: MODEL_PATH, threads });
  if (!diagnoser.modelReady()) throw new Error(`the model at ${MODEL_PATH} failed to load`);
  const started = performance.now();

  console.error(`${samples.length} ${part} photos of ${all.length}, model ${metadata.model_version}`);
  const observations = await observe(diagnoser, samples, {
    datasets: DATASETS_DIR,
    concurrency,
    wantsBoxes: (s) => leafBoxes.has(s.file),
  });
  const tables = tablesOf(observations, leafBoxes, part);
  const leaves = observations.filter((o) => isLeaf(o.sample));
  const qualityLimit = positive(values["quality-limit"], 400)!;
  const step = Math.max(1, Math.floor(leaves.length / qualityLimit));
  const qualitySamples = leaves.filter((_, i) => i % step === 0).slice(0, qualityLimit);
  console.error(`quality checks on ${qualitySamples.length} degraded copies of each kind`);
  tables.push(...(await qualityTables(diagnoser, qualitySamples, { datasets: DATASETS_DIR, concurrency })));
  await diagnoser.close();

  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  const command = ["npm run eval", ...(process.argv.length > 2 ? ["--", ...process.argv.slice(2)] : [])].join(
    " ",
  );
  const header = [
    `\`${command}\`: model \`${metadata.model_version}\`, split \`${shown(splitFile)}\`,`,
    `${samples.length} of its ${all.length} ${part} photos${limit ? ` (at most ${limit} per source, evenly spaced)` : ""},`,
    `${seconds} s with ${threads} inference thread(s).`,
    DEFINITIONS,
  ].join(" ");
  const markdown = [header, ...tables.map(markdownTable)].join("\n\n");
  console.log(markdown);
  if (values.write) {
    writeFileSync(README, replaceSection(existsSync(README) ? readFileSync(README, "utf8") : "", markdown));
    console.error(`wrote the served-path section of ${path.relative(ROOT_DIR, README)}`);
  }
}

await main();
