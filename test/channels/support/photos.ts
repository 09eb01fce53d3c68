// Real photos for the conversations, chosen by what the shipped model makes of them (so a retrained model
// still gets a photo it diagnoses, one it is unsure about, one that is no plant).
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Diagnoser } from "../../../src/diagnosis/diagnoser.js";
import type { DiagnosisResult } from "../../../src/diagnosis/types.js";
import { DATASETS_DIR } from "../../diagnosis/helpers.js";
import { findUnsurePhoto } from "../../e2e/unsure-photos.js";

async function manifest(folder: string): Promise<string[][]> {
  const text = await readFile(path.join(DATASETS_DIR, folder, "manifest.csv"), "utf8");
  return text
    .split(/\r?\n/)
    .slice(1)
    .filter(Boolean)
    .map((line) => line.split(","));
}

async function first(
  diagnoser: Diagnoser,
  folder: string,
  files: string[],
  wanted: (result: DiagnosisResult) => boolean,
  what: string,
): Promise<Buffer> {
  for (const file of files.slice(0, 60)) {
    const bytes = await readFile(path.join(DATASETS_DIR, folder, file));
    const context = { language: "en", detailLevel: "simple", includeBbox: false } as const;
    if (wanted(await diagnoser.diagnose(bytes, context, crypto.randomUUID()))) return bytes;
  }
  throw new Error(`no photo in ${folder} for ${what}`);
}

/** A leaf photo of `classId` the model names as that disease with at least `confidence`. */
export async function diagnosedPhoto(diagnoser: Diagnoser, classId: string, confidence = 0.9) {
  const files = (await manifest("leaf-photos")).filter(([, label]) => label === classId).map(([f]) => f!);
  return first(
    diagnoser,
    "leaf-photos",
    files,
    (r) =>
      r.outcome === "diagnosed" && r.diagnoses[0]?.id === classId && r.diagnoses[0].confidence >= confidence,
    `${classId} diagnosed at ${confidence}`,
  );
}

/** A photo that shows no plant (ImageNet sample), which the model says is none. */
export async function notPlantPhoto(diagnoser: Diagnoser) {
  const files = (await manifest("non-plant")).map(([f]) => f!);
  return first(diagnoser, "non-plant", files, (r) => r.outcome === "not_plant", "not a plant");
}

/** A field photo the model is unsure about, with a best guess to offer. */
export async function unsurePhoto(diagnoser: Diagnoser) {
  const file = await findUnsurePhoto(diagnoser);
  if (!file) throw new Error("the model is sure of every field photo looked at");
  return readFile(file);
}
