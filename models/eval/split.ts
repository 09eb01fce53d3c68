/**
 * The photos `npm run eval` measures: the test rows of the fixed split (models/training/split.csv), the leaf
 * boxes of the field photos (field-photos/manifest.csv), and what a farmer would say about each photo.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { ROOT_DIR } from "../../src/config.js";
import { cropOfClass } from "../../src/diagnosis/crops.js";
import { NON_PLANT_CLASS, OTHER_PLANT_CLASS } from "../../src/diagnosis/model/metadata.js";
import { type Box, parseBoxes } from "./boxes.js";

export interface Sample {
  /** Relative to the datasets folder. */
  file: string;
  label: string;
  /** The split's `source_kind`: lab, field_ibean, field_plantdoc, non_plant, other_plant, ... */
  source: string;
}

/** A photo is a leaf photo when its label is one of the model's leaf classes. */
export function isLeaf(sample: Sample): boolean {
  return sample.label !== NON_PLANT_CLASS && sample.label !== OTHER_PLANT_CLASS;
}

/** Minimal CSV reader for the quoted fields the manifests use (`"[[0.1, 0.2, 0.3, 0.4]]"`). */
export function parseCsv(text: string): Record<string, string>[] {
  const rows: string[][] = [];
  let field = "";
  let row: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      row.push(field);
      field = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
    } else field += c;
  }
  if (field !== "" || row.length > 0) rows.push([...row, field]);
  const [head, ...body] = rows.filter((r) => r.length > 1 || r[0] !== "");
  if (!head) return [];
  return body.map((r) => Object.fromEntries(head.map((name, i) => [name, r[i] ?? ""])));
}

/** The fixed split (models/training/build_split.py writes it): every photo's part, train, val or test. */
export const SPLIT_FILE = path.join(ROOT_DIR, "models", "training", "split.csv");

/** The rows of one part of the split: `test` for the model card, `val` for studies that choose something. */
export function readSplit(splitFile: string, part: "val" | "test"): Sample[] {
  return parseCsv(readFileSync(splitFile, "utf8"))
    .filter((r) => r.split === part)
    .map((r) => ({ file: r.file!, label: r.label!, source: r.source_kind! }));
}

/**
 * At most `limit` photos of each source: every k-th one, so classes keep their proportions and a rerun with the
 * same limit measures the same photos.
 */
export function evenSample(samples: Sample[], limit: number | undefined): Sample[] {
  if (!limit) return samples;
  const bySource = new Map<string, Sample[]>();
  for (const s of samples) bySource.set(s.source, [...(bySource.get(s.source) ?? []), s]);
  return [...bySource.values()].flatMap((group) => {
    if (group.length <= limit) return group;
    const step = group.length / limit;
    return Array.from({ length: limit }, (_, i) => group[Math.floor(i * step)]!);
  });
}

/**
 * The `crop_type` a farmer would send: the crop of the true class for a leaf photo, the plant's own name for a
 * crop we do not cover (`other-plants/grape_leaf/...` → "grape", a crop the service does not know), nothing for a
 * photo that shows no plant.
 */
export function statedCrop(sample: Sample): string | undefined {
  if (sample.label === NON_PLANT_CLASS) return undefined;
  if (sample.label === OTHER_PLANT_CLASS) return path.basename(path.dirname(sample.file)).split("_")[0];
  return cropOfClass(sample.label) ?? undefined;
}

export interface LeafBoxes {
  boxes: Box[];
  width: number;
  height: number;
}

/** The PlantDoc leaf boxes of field-photos/, keyed by the split's file path. */
export function readLeafBoxes(datasets: string): Map<string, LeafBoxes> {
  const manifest = path.join(datasets, "field-photos", "manifest.csv");
  return new Map(
    parseCsv(readFileSync(manifest, "utf8")).map((r) => [
      `field-photos/${r.file}`,
      { boxes: parseBoxes(r.leaf_boxes!), width: Number(r.width), height: Number(r.height) },
    ]),
  );
}
