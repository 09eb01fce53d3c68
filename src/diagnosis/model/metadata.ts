import { readFile } from "node:fs/promises";
import path from "node:path";
import type { InputSpec } from "./preprocess.js";

/** classes.json, written by the training export next to the .onnx file: the model's contract with the server. */
export interface ModelMetadata {
  model_version: string;
  input: Omit<InputSpec, "cropRounding"> & { resize: string; color: string; scale: number; layout: string };
  /** Leaf classes `<crop>__<condition>`, then `non_plant`; index = logit index. */
  classes: string[];
  temperature: number;
  unsure_threshold: number;
  non_plant_threshold: number;
  /** With an `other_plant` class: its calibrated probability from which a photo shows a crop we do not cover. */
  other_plant_threshold?: number;
}

export const NON_PLANT_CLASS = "non_plant";
export const OTHER_PLANT_CLASS = "other_plant";

/**
 * The crop's rounding, read from the rule text of classes.json (`left=floor((w-128)/2)` or `left=ceil(...)`):
 * the first exported models used floor, later ones ceil. One pixel of shift moves field-photo probabilities by
 * up to 0.04, so the server follows whatever the model was trained with. Ceil, sharp's convention, by default.
 */
export function inputSpec(meta: ModelMetadata): InputSpec {
  const rounding = /left\s*=\s*(floor|ceil)\(/.exec(meta.input.resize ?? "")?.[1];
  return {
    size: meta.input.size,
    mean: meta.input.mean,
    std: meta.input.std,
    cropRounding: rounding === "floor" ? "floor" : "ceil",
  };
}

export function metadataPath(modelPath: string): string {
  return path.join(path.dirname(modelPath), "classes.json");
}

/** Reads and checks classes.json: a model whose contract the server would misread must not serve. */
export async function loadMetadata(modelPath: string): Promise<ModelMetadata> {
  const file = metadataPath(modelPath);
  const meta = JSON.parse(await readFile(file, "utf8")) as ModelMetadata;
  const problems: string[] = [];
  if (!Array.isArray(meta.classes) || meta.classes.length < 2)
    problems.push("classes must list the model's classes");
  if (!meta.classes?.includes(NON_PLANT_CLASS)) problems.push(`classes must include "${NON_PLANT_CLASS}"`);
  if (!(meta.temperature > 0)) problems.push("temperature must be positive");
  for (const key of ["unsure_threshold", "non_plant_threshold"] as const) {
    if (!(meta[key] >= 0 && meta[key] <= 1)) problems.push(`${key} must be between 0 and 1`);
  }
  const otherPlant = meta.other_plant_threshold;
  if (
    meta.classes?.includes(OTHER_PLANT_CLASS) &&
    !(otherPlant !== undefined && otherPlant >= 0 && otherPlant <= 1)
  )
    problems.push(`a model with "${OTHER_PLANT_CLASS}" needs other_plant_threshold between 0 and 1`);
  const input = meta.input;
  if (!input || !(input.size > 0) || input.mean?.length !== 3 || input.std?.length !== 3) {
    problems.push("input must give size, mean[3] and std[3]");
  } else {
    if (input.layout !== "NCHW") problems.push(`input.layout "${input.layout}" is not NCHW`);
    if (input.color !== "RGB") problems.push(`input.color "${input.color}" is not RGB`);
    if (input.scale !== 255) problems.push(`input.scale ${input.scale} is not 255`);
  }
  if (problems.length > 0) throw new Error(`${file}: ${problems.join("; ")}`);
  return meta;
}
