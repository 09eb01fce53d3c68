import { mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import sharp from "sharp";
import { conditionOfClass, cropOfClass } from "../diagnosis/crops.js";
import type { ExampleStore, LabelledExample } from "./examples.js";

/** The manifest's columns: the shared datasets' own first six, then where the photo came from and who labelled it. */
export const MANIFEST_COLUMNS = [
  "file",
  "label",
  "crop",
  "condition",
  "width",
  "height",
  "source_channel",
  "region",
  "date",
  "officer_decision",
  "officer",
  "decided_at",
  "consent",
  "model_outcome",
  "model_top",
  "request_id",
] as const;

function csvField(value: string | number): string {
  const text = String(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export interface ExportSummary {
  photos: number;
  classes: Record<string, number>;
  skipped: { id: string; reason: string }[];
}

/**
 * Writes every labelled example as a dataset in the layout of ../shared/datasets/leaf-photos: one folder
 * per class (`<crop>__<condition>/`), JPEG files named by their request id, and `manifest.csv`. Refuses a
 * directory that already holds files, so an export never mixes with an older one.
 */
export async function exportDataset(
  examples: ExampleStore,
  dir: string,
  onProgress: (done: number, total: number) => void = () => {},
): Promise<ExportSummary> {
  await mkdir(dir, { recursive: true });
  if ((await readdir(dir)).length > 0)
    throw new Error(`${dir} is not empty: export into a new or empty directory`);
  const all = (await examples.list()).sort(
    (a, b) => a.label.localeCompare(b.label) || a.takenAt.localeCompare(b.takenAt),
  );
  const rows: string[] = [MANIFEST_COLUMNS.join(",")];
  const summary: ExportSummary = { photos: 0, classes: {}, skipped: [] };
  for (const [i, example] of all.entries()) {
    onProgress(i, all.length);
    const photo = await examples.photo(example.id);
    if (!photo) {
      summary.skipped.push({ id: example.id, reason: "photo missing" });
      continue;
    }
    const jpeg =
      photo.type === "image/jpeg"
        ? photo.data
        : await sharp(photo.data)
            .jpeg({ quality: 90 })
            .toBuffer()
            .catch(() => undefined);
    if (!jpeg) {
      summary.skipped.push({ id: example.id, reason: `cannot convert ${photo.type} to JPEG` });
      continue;
    }
    const { width = 0, height = 0 } = await sharp(jpeg).metadata();
    const file = `${example.label}/${example.id}.jpg`;
    await mkdir(path.join(dir, example.label), { recursive: true });
    await writeFile(path.join(dir, file), jpeg);
    rows.push(manifestRow(example, file, width, height).map(csvField).join(","));
    summary.photos += 1;
    summary.classes[example.label] = (summary.classes[example.label] ?? 0) + 1;
  }
  onProgress(all.length, all.length);
  await writeFile(path.join(dir, "manifest.csv"), `${rows.join("\n")}\n`);
  return summary;
}

function manifestRow(e: LabelledExample, file: string, width: number, height: number): (string | number)[] {
  return [
    file,
    e.label,
    cropOfClass(e.label) ?? "",
    conditionOfClass(e.label),
    width,
    height,
    e.source,
    e.region,
    e.takenAt.slice(0, 10),
    e.decision,
    e.officer,
    e.decidedAt,
    e.consent.basis,
    e.modelOutcome,
    e.modelTop ?? "",
    e.id,
  ];
}
