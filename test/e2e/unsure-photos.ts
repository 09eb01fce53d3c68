// Field photos the shipped model is unsure about, for the end-to-end test of the expert loop. The test takes
// the first of test/e2e/fixtures/ that the model in models/ is unsure about, and looks further in
// ../shared/datasets/field-photos when a retrained model is sure of all of them.
//
// `npx tsx test/e2e/unsure-photos.ts [N]` re-chooses the fixtures: N field photos the current
// model is unsure about (around the median file size) are copied to test/e2e/fixtures/ (PlantDoc, CC BY 4.0: see fixtures/CREDITS.md).
import { mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { ROOT_DIR } from "../../src/config.js";
import { createDiagnoser } from "../../src/diagnosis/diagnose.js";
import type { Diagnoser } from "../../src/diagnosis/diagnoser.js";
import type { DiagnosisResult, Outcome } from "../../src/diagnosis/types.js";
import { DATASETS_DIR, MODEL_PATH } from "../diagnosis/helpers.js";

export const FIXTURES_DIR = path.join(ROOT_DIR, "test/e2e/fixtures");
export const FIELD_PHOTOS = path.join(DATASETS_DIR, "field-photos");

async function resultOf(diagnoser: Diagnoser, file: string): Promise<DiagnosisResult> {
  const context = { language: "sw", detailLevel: "simple", includeBbox: true } as const;
  return diagnoser.diagnose(await readFile(file), context, crypto.randomUUID());
}

const isUnsure = async (diagnoser: Diagnoser, file: string) =>
  (await resultOf(diagnoser, file)).outcome === "unsure";

async function jpegsIn(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  return entries
    .filter((f) => f.endsWith(".jpg"))
    .sort()
    .map((f) => path.join(dir, f));
}

/** The first photo the model is unsure about: the committed fixtures first, then (at most `limit`) field photos. */
export async function findUnsurePhoto(diagnoser: Diagnoser, limit = 400): Promise<string | undefined> {
  for (const file of await jpegsIn(FIXTURES_DIR)) if (await isUnsure(diagnoser, file)) return file;
  for (const file of (await jpegsIn(FIELD_PHOTOS)).slice(0, limit))
    if (await isUnsure(diagnoser, file)) return file;
  return undefined;
}

/**
 * The first field photos (at most `limit` looked at) with the outcome asked for, up to `count` of them; with
 * `boxed`, only photos whose result draws boxes (the field model boxes few of them: leaves it looked at closer).
 */
export async function fieldPhotos(
  diagnoser: Diagnoser,
  outcome: Outcome,
  count: number,
  { limit = 400, boxed = false } = {},
): Promise<string[]> {
  const found: string[] = [];
  for (const file of (await jpegsIn(FIELD_PHOTOS)).slice(0, limit)) {
    const result = await resultOf(diagnoser, file);
    if (result.outcome === outcome && (!boxed || (result.detections?.length ?? 0) > 0)) found.push(file);
    if (found.length === count) break;
  }
  return found;
}

async function choose(count: number): Promise<void> {
  const diagnoser = await createDiagnoser({
    modelPath: MODEL_PATH,
    threads: 1,
  });
  try {
    const unsure: { file: string; bytes: number }[] = [];
    const all = await jpegsIn(FIELD_PHOTOS);
    for (const file of all)
      if (await isUnsure(diagnoser, file)) unsure.push({ file, bytes: (await stat(file)).size });
    console.log(`${unsure.length} of ${all.length} field photos are unsure`);
    // Around the median size: the smallest are mostly stock pictures on white, the largest cost the repository.
    const sorted = unsure.sort((a, b) => a.bytes - b.bytes);
    const middle = Math.max(0, Math.floor(sorted.length / 2) - Math.floor(count / 2));
    const chosen = sorted.slice(middle, middle + count);
    await rm(FIXTURES_DIR, { recursive: true, force: true });
    await mkdir(FIXTURES_DIR, { recursive: true });
    const credits = [
      "# Fixtures",
      "",
      'Field photos from PlantDoc (Singh et al. 2020, "PlantDoc: A Dataset for Visual Plant Disease Detection"),',
      "CC BY 4.0, as re-encoded in ../shared/datasets/field-photos; chosen by `npx tsx test/e2e/unsure-photos.ts`",
      "because the model shipped at the time was unsure about them.",
      "",
      "| file | field-photos path |",
      "|---|---|",
    ];
    for (const { file } of chosen) {
      const name = path.basename(file);
      await writeFile(path.join(FIXTURES_DIR, name), await readFile(file));
      credits.push(`| ${name} | ${path.relative(FIELD_PHOTOS, file)} |`);
    }
    await writeFile(path.join(FIXTURES_DIR, "CREDITS.md"), `${credits.join("\n")}\n`);
    console.log(chosen.map((c) => path.relative(FIELD_PHOTOS, c.file)).join("\n"));
  } finally {
    await diagnoser.close();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  await choose(Number(process.argv[2] ?? 4));
}
