import { readFile } from "node:fs/promises";
import path from "node:path";
import type { InputSpec } from "./preprocess.js";

/** How the leaf finder's grid is read (CONTRACT step 2). */
export interface LeafSettings {
  /** Minimum sigmoid heat of a leaf centre. */
  threshold: number;
  /** Leaves kept after non-maximum suppression. */
  max: number;
  /** A box overlapping a stronger kept one by more than this IoU is dropped. */
  nms_iou: number;
}

/** How the leaf crops are cut (CONTRACT steps 3-4). */
export interface ViewSettings {
  /** Side of the working image the crops are cut from (the centre view's field of view, more pixels). */
  working_size: number;
  /** Leaves cropped and run through the model, strongest first. */
  leaf_crops: number;
  /** The crop window's side over the leaf box's longer side. */
  margin: number;
  /** A leaf covering more than this share of the centre view is not cropped (the centre view already shows it). */
  max_area: number;
  /** Smallest crop window side, as a share of the working image. */
  min_side: number;
  /**
   * Side of a closer view of the centre view's middle, as a share of it, read with the leaf crops when a leaf was
   * found but fewer than `leaf_crops` are cropped and the centre view is unsure (`zoom_below`); 0: none. Chosen on
   * val: a field photo's leaves often fill the view, and the closer view reads their lesions larger.
   */
  zoom: number;
  /**
   * The closer view is read only when the centre view's likeliest leaf class has less probability than this, at
   * temperature 1 (chosen on val before the temperature is fitted).
   */
  zoom_below: number;
}

/** classes.json, written by the training export next to the .onnx file: the model's contract with the server. */
export interface ModelMetadata {
  model_version: string;
  input: InputSpec & { resize: string; color: string; scale: number; layout: string };
  /** Leaf classes `<crop>__<condition>`, then `other_plant` and `non_plant`; index = logit index. */
  classes: string[];
  temperature: number;
  unsure_threshold: number;
  non_plant_threshold: number;
  distance_threshold: number;
  other_plant_threshold: number;
  leaves: LeafSettings;
  views: ViewSettings;
}

export const NON_PLANT_CLASS = "non_plant";
export const OTHER_PLANT_CLASS = "other_plant";
/** The leaf finder's grid has one cell per this many input pixels. */
export const LEAF_GRID_STRIDE = 16;

/**
 * Probabilities over the leaf classes alone (`other_plant` and `non_plant` left out), renormalised to sum 1:
 * what the photo shows, given that it is one of the crops covered (CONTRACT step 6).
 */
export function leafProbabilities(probabilities: ArrayLike<number>, classes: string[]): Map<string, number> {
  const leaf = classes.flatMap((id, i) =>
    id === NON_PLANT_CLASS || id === OTHER_PLANT_CLASS ? [] : [[id, probabilities[i]!] as const],
  );
  const total = leaf.reduce((sum, [, p]) => sum + p, 0);
  return new Map(leaf.map(([id, p]) => [id, total > 0 ? p / total : 0]));
}

export function metadataPath(modelPath: string): string {
  return path.join(path.dirname(modelPath), "classes.json");
}

const isProbability = (x: unknown) => typeof x === "number" && x >= 0 && x <= 1;
const isPositiveInteger = (x: unknown) => Number.isInteger(x) && (x as number) > 0;

function checkInput(input: ModelMetadata["input"] | undefined, problems: string[]): void {
  if (!input || !(input.size > 0) || input.mean?.length !== 3 || input.std?.length !== 3) {
    problems.push("input must give size, mean[3] and std[3]");
    return;
  }
  if (!isPositiveInteger(input.size) || input.size % LEAF_GRID_STRIDE !== 0)
    problems.push(`input.size ${input.size} is not a multiple of ${LEAF_GRID_STRIDE}`);
  if (input.layout !== "NCHW") problems.push(`input.layout "${input.layout}" is not NCHW`);
  if (input.color !== "RGB") problems.push(`input.color "${input.color}" is not RGB`);
  if (input.scale !== 255) problems.push(`input.scale ${input.scale} is not 255`);
}

function checkLeavesAndViews(meta: ModelMetadata, problems: string[]): void {
  const { leaves, views } = meta;
  if (
    !leaves ||
    !isProbability(leaves.threshold) ||
    !isPositiveInteger(leaves.max) ||
    !isProbability(leaves.nms_iou)
  )
    problems.push("leaves must give threshold (0-1), max (a positive integer) and nms_iou (0-1)");
  if (
    !views ||
    !isPositiveInteger(views.working_size) ||
    !(Number.isInteger(views.leaf_crops) && views.leaf_crops >= 0) ||
    !(views.margin > 0) ||
    !isProbability(views.max_area) ||
    !(views.min_side > 0 && views.min_side <= 1) ||
    !(views.zoom >= 0 && views.zoom < 1) ||
    !(typeof views.zoom_below === "number" && views.zoom_below >= 0)
  )
    problems.push(
      "views must give working_size (a positive integer), leaf_crops (an integer ≥ 0), margin (> 0), max_area (0-1), min_side (0-1], zoom [0-1) and zoom_below (≥ 0)",
    );
}

/** Reads and checks classes.json: a model whose contract the server would misread must not serve. */
export async function loadMetadata(modelPath: string): Promise<ModelMetadata> {
  const file = metadataPath(modelPath);
  const meta = JSON.parse(await readFile(file, "utf8")) as ModelMetadata;
  const problems: string[] = [];
  if (!Array.isArray(meta.classes) || meta.classes.length < 3)
    problems.push("classes must list the model's classes");
  for (const required of [OTHER_PLANT_CLASS, NON_PLANT_CLASS]) {
    if (!meta.classes?.includes(required)) problems.push(`classes must include "${required}"`);
  }
  if (!(meta.temperature > 0)) problems.push("temperature must be positive");
  for (const key of ["unsure_threshold", "non_plant_threshold", "other_plant_threshold"] as const) {
    if (!isProbability(meta[key])) problems.push(`${key} must be between 0 and 1`);
  }
  if (!(meta.distance_threshold > 0)) problems.push("distance_threshold must be positive");
  checkInput(meta.input, problems);
  checkLeavesAndViews(meta, problems);
  if (problems.length > 0) throw new Error(`${file}: ${problems.join("; ")}`);
  return meta;
}
