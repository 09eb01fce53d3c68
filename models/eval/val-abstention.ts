/**
 * npx tsx models/eval/val-abstention.ts [--source field_plantdoc] [--threads N]
 *
 * How the service's abstention could be chosen, measured on the VAL split only, through the core's public entry
 * point as `npm run eval` measures the test split: the answered photos per crop, and how right the most sure
 * photos are under other scores than the service's. Prints markdown; chooses and writes nothing.
 */
import { parseArgs } from "node:util";
import { createDiagnoser } from "../../src/diagnosis/diagnose.js";
import { DATASETS_DIR, MODEL_PATH } from "../../test/diagnosis/helpers.js";
import { coverageTable, perCropTable } from "./abstention.js";
import { markdownTable } from "./report.js";
import { observe, studyThreads } from "./run.js";
import { readSplit, SPLIT_FILE } from "./split.js";

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      source: { type: "string", default: "field_plantdoc" },
      threads: { type: "string", default: "2" },
    },
  });
  const threads = studyThreads(values.threads);
  const samples = readSplit(SPLIT_FILE, "val").filter((s) => s.source === values.source);
  if (samples.length === 0) throw new Error(`no val photos of source ${values.source} in ${SPLIT_FILE}`);
  const diagnoser = await createDiagnoser({ modelPath: MODEL_PATH, threads });
  if (!diagnoser.modelReady()) throw new Error(`the model at ${MODEL_PATH} failed to load`);
  const observations = await observe(diagnoser, samples, {
    datasets: DATASETS_DIR,
    concurrency: 2 * threads,
    wantsBoxes: () => false,
  });
  await diagnoser.close();
  const withCrop = (o: (typeof observations)[number]) => o.withCrop;
  console.log(`Val photos of source \`${values.source}\`: ${samples.length}.\n`);
  console.log(`${markdownTable(perCropTable(observations, withCrop))}\n`);
  console.log(markdownTable(coverageTable(observations, withCrop)));
}

await main();
