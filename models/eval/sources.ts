/**
 * Per-source figures read from the API's results only: what a farmer is answered, and how often it is right.
 *
 * Top-1: the result's first candidate (`candidates[0].id`, the model's best reading after crop and region
 * narrowing, listed also when it is unsure) is the photo's label. A result without candidates ("not a plant",
 * "crop not supported") counts as wrong for a leaf photo.
 * Answered: outcome `diagnosed` or `healthy` (a disease named, or the leaf called healthy); right when its top
 * reading is the label.
 */
import type { DiagnosisResult, Outcome } from "../../src/diagnosis/types.js";
import { pct, type Row, type Table } from "./report.js";
import type { Observation } from "./run.js";
import { isLeaf } from "./split.js";

/** The order of the tables' rows; a source the split adds later comes after these. */
const SOURCE_ORDER = [
  "lab",
  "field_ibean",
  "maize_plantdoc",
  "field_plantdoc",
  "white_bg_rice",
  "other_plant",
  "non_plant",
];

export const isRight = (result: DiagnosisResult, label: string) => result.candidates[0]?.id === label;
export const isAnswered = (result: DiagnosisResult) =>
  result.outcome === "diagnosed" || result.outcome === "healthy";

export function bySource(observations: Observation[]): [string, Observation[]][] {
  const groups = new Map<string, Observation[]>();
  for (const o of observations) groups.set(o.sample.source, [...(groups.get(o.sample.source) ?? []), o]);
  const rank = (source: string) => {
    const i = SOURCE_ORDER.indexOf(source);
    return i === -1 ? SOURCE_ORDER.length : i;
  };
  return [...groups].sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b));
}

function share(items: DiagnosisResult[], outcome: Outcome): string {
  return pct(items.filter((r) => r.outcome === outcome).length, items.length);
}

/** Top-1 over the leaf photos; "–" for photos whose label no candidate can carry. */
function top1(items: Observation[], pick: (o: Observation) => DiagnosisResult): string {
  const leaves = items.filter((o) => isLeaf(o.sample));
  return pct(leaves.filter((o) => isRight(pick(o), o.sample.label)).length, leaves.length);
}

/** How many of the photos `pick` answers, and how many of those answers are right. */
export function answeredRight(
  items: Observation[],
  pick: (o: Observation) => DiagnosisResult,
): { answered: number; right: number } {
  const answered = items.filter((o) => isAnswered(pick(o)));
  return {
    answered: answered.length,
    right: answered.filter((o) => isRight(pick(o), o.sample.label)).length,
  };
}

function outcomeCells(items: Observation[], pick: (o: Observation) => DiagnosisResult): Row {
  const results = items.map(pick);
  const { answered, right } = answeredRight(items, pick);
  return [
    pct(answered, items.length),
    pct(right, answered),
    share(results, "unsure"),
    share(results, "not_plant"),
    share(results, "crop_not_supported"),
    share(results, "diagnosed"),
  ];
}

const OUTCOME_HEAD = [
  "answered",
  "right when answered",
  "unsure",
  "not a plant",
  "crop not supported",
  "a disease named",
];

export function withCropTable(groups: [string, Observation[]][], key: string, title: string): Table {
  return {
    title,
    head: [key, "photos", "top-1", "top-1 without crop_type", ...OUTCOME_HEAD],
    rows: groups.map(([name, items]) => [
      name,
      items.length,
      top1(items, (o) => o.withCrop),
      top1(items, (o) => o.withoutCrop),
      ...outcomeCells(items, (o) => o.withCrop),
    ]),
  };
}

export function withoutCropTable(groups: [string, Observation[]][], key: string, title: string): Table {
  return {
    title,
    head: [key, "photos", "top-1", ...OUTCOME_HEAD],
    rows: groups.map(([name, items]) => [
      name,
      items.length,
      top1(items, (o) => o.withoutCrop),
      ...outcomeCells(items, (o) => o.withoutCrop),
    ]),
  };
}

export function byLabel(observations: Observation[]): [string, Observation[]][] {
  const groups = new Map<string, Observation[]>();
  for (const o of observations) groups.set(o.sample.label, [...(groups.get(o.sample.label) ?? []), o]);
  return [...groups].sort(([a], [b]) => a.localeCompare(b));
}
