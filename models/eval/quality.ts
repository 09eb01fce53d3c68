/**
 * The quality checks: degraded copies of test leaf photos should each raise their issue, and the clean photos
 * none. Read from the result's `image_analysis.quality_issue`.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import sharp from "sharp";
import type { Diagnoser } from "../../src/diagnosis/diagnoser.js";
import { QUALITY_ISSUES, type QualityIssue } from "../../src/diagnosis/types.js";
import { pct, type Row, type Table } from "./report.js";
import { context, mapConcurrent, type Observation } from "./run.js";

/** Degraded copies: each should raise its issue. Strengths are relative to the photo's size at model scale. */
const DEGRADATIONS: {
  name: string;
  expected: QualityIssue;
  apply(bytes: Buffer, shortSide: number): Promise<Buffer>;
}[] = [
  {
    name: "blur (σ = 2 px at 128 px)",
    expected: "blurry",
    apply: (b, s) =>
      sharp(b)
        .blur((2 * s) / 128)
        .jpeg()
        .toBuffer(),
  },
  { name: "darken (×0.25)", expected: "too_dark", apply: (b) => sharp(b).linear(0.25, 0).jpeg().toBuffer() },
  {
    name: "overexpose (×2.5 + 40)",
    expected: "overexposed",
    apply: (b) => sharp(b).linear(2.5, 40).jpeg().toBuffer(),
  },
  {
    name: "downscale (shorter side 40 px)",
    expected: "too_small",
    apply: (b) => sharp(b).resize({ width: 40, height: 40, fit: "outside" }).jpeg().toBuffer(),
  },
];

export async function qualityTables(
  diagnoser: Diagnoser,
  clean: Observation[],
  options: { datasets: string; concurrency: number },
): Promise<Table[]> {
  const rows: Row[] = [];
  for (const degradation of DEGRADATIONS) {
    console.error(`  quality: ${degradation.name}, ${clean.length} photos`);
    const issues = await mapConcurrent(clean, options.concurrency, async ({ sample }, i) => {
      const bytes = await readFile(path.join(options.datasets, sample.file));
      const meta = await sharp(bytes).metadata();
      const degraded = await degradation.apply(bytes, Math.min(meta.width ?? 128, meta.height ?? 128));
      const result = await diagnoser.diagnose(degraded, context(undefined, false), `eval-quality-${i}`);
      return result.image_analysis.quality_issue;
    });
    rows.push([
      degradation.name,
      `\`${degradation.expected}\``,
      clean.length,
      pct(issues.filter((issue) => issue === degradation.expected).length, clean.length),
      pct(issues.filter((issue) => issue !== null).length, clean.length),
    ]);
  }
  const cleanIssues = clean.map((o) => o.withoutCrop.image_analysis.quality_issue);
  const falseAlarms: Row[] = QUALITY_ISSUES.map((issue) => [
    `\`${issue}\``,
    pct(cleanIssues.filter((i) => i === issue).length, clean.length),
  ]);
  falseAlarms.push(["any issue", pct(cleanIssues.filter((i) => i !== null).length, clean.length)]);
  return [
    {
      title:
        "Quality checks on degraded copies of test leaf photos (in-sample: the thresholds were chosen on test-split photos and their copies, src/diagnosis/image/quality.ts, so these rates are optimistic)",
      head: ["degradation", "expected issue", "n", "detected (expected issue)", "any issue raised"],
      rows,
    },
    {
      title: `False alarms on the same ${clean.length} clean photos`,
      head: ["issue", "rate"],
      rows: falseAlarms,
    },
  ];
}
