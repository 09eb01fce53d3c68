/**
 * npm run eval [-- --limit N] [--write] [--threads N]
 *
 * Measures the SERVED path (sharp decode, the Node preprocessing, ONNX Runtime, temperature scaling, the
 * is-plant rule and the quality checks) on the fixed test split, and prints the tables of the model card's
 * "Served-path evaluation" section; --write puts them into models/README.md between its markers.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import sharp from "sharp";
import { ROOT_DIR } from "../../src/config.js";
import { type Analyser, type Analysis, createAnalyser } from "../../src/diagnosis/analyse.js";
import { MIN_PLANT_FRACTION } from "../../src/diagnosis/image/is-plant.js";
import { calibratedProbabilities } from "../../src/diagnosis/model/calibrate.js";
import { NON_PLANT_CLASS } from "../../src/diagnosis/model/metadata.js";
import type { QualityIssue } from "../../src/diagnosis/types.js";
import { boxTable } from "./boxes.js";
import { expectedCalibrationError } from "./calibration.js";
import { markdownTable, pct, type Row, replaceSection, type Table } from "./report.js";

const DATASETS = path.resolve(ROOT_DIR, "..", "shared", "datasets");
const SPLIT = path.join(ROOT_DIR, "models", "training", "split.csv");
const README = path.join(ROOT_DIR, "models", "README.md");
const MODEL = path.join(ROOT_DIR, "models", "disease-classifier.onnx");

interface Sample {
  file: string;
  label: string;
  sourceKind: string;
}

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

function readSplit(limit: number | undefined): { samples: Sample[]; total: number } {
  const lines = readFileSync(SPLIT, "utf8").trim().split(/\r?\n/);
  const header = lines[0]!.split(",");
  const col = (name: string) => header.indexOf(name);
  const test = lines
    .slice(1)
    .map((line) => line.split(","))
    .filter((f) => f[col("split")] === "test")
    .map((f) => ({ file: f[col("file")]!, label: f[col("label")]!, sourceKind: f[col("source_kind")]! }));
  if (!limit || limit >= test.length) return { samples: test, total: test.length };
  // Every k-th photo: keeps every class and source in proportion, and the same subset from run to run.
  const step = test.length / limit;
  return {
    samples: Array.from({ length: limit }, (_, i) => test[Math.floor(i * step)]!),
    total: test.length,
  };
}

interface Scored {
  sample: Sample;
  analysis: Analysis;
  ranked: string[];
  /** Top leaf class probability given that the photo is a plant (what the unsure rule compares). */
  topLeafProbability: number;
}

function score(sample: Sample, analysis: Analysis, classes: string[]): Scored {
  const probabilities = analysis.model!.probabilities;
  const ranked = classes.map((id, i) => [id, probabilities[i]!] as const).sort((a, b) => b[1] - a[1]);
  const leafShare = 1 - analysis.model!.nonPlantProbability;
  const topLeaf = ranked.find(([id]) => id !== NON_PLANT_CLASS)?.[1] ?? 0;
  return {
    sample,
    analysis,
    ranked: ranked.map(([id]) => id),
    topLeafProbability: leafShare > 0 ? topLeaf / leafShare : 0,
  };
}

function accuracyTable(title: string, groups: Map<string, Scored[]>, unsureThreshold: number): Table {
  const rows: Row[] = [];
  for (const [key, items] of [...groups].sort()) {
    const top1 = items.filter((s) => s.ranked[0] === s.sample.label).length;
    const top3 = items.filter((s) => s.ranked.slice(0, 3).includes(s.sample.label)).length;
    const accepted = items.filter((s) => s.analysis.isPlant && s.topLeafProbability >= unsureThreshold);
    const acceptedCorrect = accepted.filter(
      (s) => s.ranked.find((id) => id !== NON_PLANT_CLASS) === s.sample.label,
    ).length;
    rows.push([
      key,
      items.length,
      pct(top1, items.length),
      pct(top3, items.length),
      pct(items.length - accepted.length, items.length),
      pct(acceptedCorrect, accepted.length),
    ]);
  }
  return { title, head: [title, "n", "top-1", "top-3", "unsure or rejected", "top-1 of accepted"], rows };
}

function groupBy(items: Scored[], key: (s: Scored) => string): Map<string, Scored[]> {
  const groups = new Map<string, Scored[]>();
  for (const s of items) groups.set(key(s), [...(groups.get(key(s)) ?? []), s]);
  return groups;
}

/** ECE of the raw softmax and of the temperature-scaled one, over all 26 classes and every test photo. */
function calibrationTable(scored: Scored[], classes: string[], temperature: number): Table {
  const ece = (t: number) =>
    expectedCalibrationError(
      scored.map((s) => {
        const probabilities = calibratedProbabilities(s.analysis.model!.output.logits, t);
        const top = probabilities.indexOf(Math.max(...probabilities));
        return { confidence: probabilities[top]!, correct: classes[top] === s.sample.label };
      }),
    );
  return {
    title: "Calibration (expected calibration error, 15 bins, all test photos, 26 classes)",
    head: ["probabilities", "ECE"],
    rows: [
      ["softmax of the logits (temperature 1)", pct(ece(1), 1)],
      [`temperature-scaled (T = ${temperature}, fitted on val)`, pct(ece(temperature), 1)],
    ],
  };
}

async function qualityTables(
  analyser: Analyser,
  samples: Sample[],
  clean: Map<string, Analysis>,
): Promise<Table[]> {
  const rows: Row[] = [];
  const cleanIssues = samples.map((s) => clean.get(s.file)!.qualityIssue);
  const anyIssue = cleanIssues.filter((i) => i !== null).length;
  for (const degradation of DEGRADATIONS) {
    let hit = 0;
    let flagged = 0;
    for (const sample of samples) {
      const bytes = readFileSync(path.join(DATASETS, sample.file));
      const meta = await sharp(bytes).metadata();
      const degraded = await degradation.apply(bytes, Math.min(meta.width ?? 128, meta.height ?? 128));
      const issue = (await analyser.analyse(degraded)).qualityIssue;
      if (issue === degradation.expected) hit++;
      if (issue !== null) flagged++;
    }
    rows.push([
      degradation.name,
      `\`${degradation.expected}\``,
      samples.length,
      pct(hit, samples.length),
      pct(flagged, samples.length),
    ]);
  }
  const falseAlarms: Row[] = ["too_small", "too_dark", "overexposed", "blurry", "no_leaf_visible"].map(
    (issue) => [`\`${issue}\``, pct(cleanIssues.filter((i) => i === issue).length, samples.length)],
  );
  falseAlarms.push(["any issue", pct(anyIssue, samples.length)]);
  return [
    {
      title: "Quality checks on degraded copies of test leaf photos",
      head: ["degradation", "expected issue", "n", "detected (expected issue)", "any issue raised"],
      rows,
    },
    {
      title: `False alarms on the same ${samples.length} clean photos`,
      head: ["issue", "rate"],
      rows: falseAlarms,
    },
  ];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      limit: { type: "string" },
      "quality-limit": { type: "string" },
      threads: { type: "string" },
      write: { type: "boolean" },
    },
  });
  if (!existsSync(DATASETS)) {
    console.error(
      `npm run eval needs the datasets at ${DATASETS} (../shared/datasets beside the repository).`,
    );
    process.exit(2);
  }
  if (!existsSync(MODEL)) {
    console.error(`No model at ${MODEL}: train and export one first (models/training).`);
    process.exit(2);
  }
  const limit = values.limit ? Number(values.limit) : undefined;
  const { samples, total } = readSplit(limit);
  const analyser = await createAnalyser({ modelPath: MODEL, threads: Number(values.threads ?? 1) });
  const metadata = analyser.metadata;
  if (!metadata) throw new Error("the model failed to load");
  const started = performance.now();

  const scored: Scored[] = [];
  const clean = new Map<string, Analysis>();
  for (const [i, sample] of samples.entries()) {
    const analysis = await analyser.analyse(readFileSync(path.join(DATASETS, sample.file)));
    clean.set(sample.file, analysis);
    scored.push(score(sample, analysis, metadata.classes));
    if ((i + 1) % 500 === 0) console.error(`  ${i + 1}/${samples.length} test photos`);
  }
  const leaves = scored.filter((s) => s.sample.label !== NON_PLANT_CLASS);
  const nonPlants = scored.filter((s) => s.sample.label === NON_PLANT_CLASS);
  const threshold = metadata.unsure_threshold;

  const tables: Table[] = [
    accuracyTable(
      "source",
      groupBy(leaves, (s) => s.sample.sourceKind),
      threshold,
    ),
    accuracyTable("all leaf photos", new Map([["all", leaves]]), threshold),
    accuracyTable(
      "class",
      groupBy(leaves, (s) => s.sample.label),
      threshold,
    ),
  ];
  const confusions = new Map<string, number>();
  for (const s of leaves) {
    if (s.ranked[0] !== s.sample.label) {
      const pair = `${s.sample.label} → ${s.ranked[0]}`;
      confusions.set(pair, (confusions.get(pair) ?? 0) + 1);
    }
  }
  tables.push({
    title: "Most frequent confusions (true → predicted)",
    head: ["pair", "count"],
    rows: [...confusions].sort((a, b) => b[1] - a[1]).slice(0, 12),
  });
  tables.push(calibrationTable(scored, metadata.classes, metadata.temperature));
  const falseAccept = nonPlants.filter((s) => s.analysis.isPlant).length;
  const falseReject = leaves.filter((s) => !s.analysis.isPlant).length;
  const byModel = (s: Scored) => s.analysis.model!.nonPlantProbability >= metadata.non_plant_threshold;
  const modelAccepts = nonPlants.filter((s) => !byModel(s)).length;
  tables.push({
    title: `is_plant (not a plant when the model's \`non_plant\` ≥ ${metadata.non_plant_threshold}, or under ${MIN_PLANT_FRACTION * 100} % leaf-coloured pixels)`,
    head: ["measure", "rate", "n"],
    rows: [
      ["false accept (non-plant photo called a plant)", pct(falseAccept, nonPlants.length), nonPlants.length],
      [
        "false accept by the model's vote alone (without the colour veto)",
        pct(modelAccepts, nonPlants.length),
        nonPlants.length,
      ],
      ["false reject (leaf photo called not a plant)", pct(falseReject, leaves.length), leaves.length],
      ...[...groupBy(leaves, (s) => s.sample.sourceKind)]
        .sort()
        .map(
          ([kind, items]): Row => [
            `false reject, ${kind}`,
            pct(items.filter((s) => !s.analysis.isPlant).length, items.length),
            items.length,
          ],
        ),
    ],
  });

  tables.push(
    boxTable(
      leaves
        .filter(
          (s) =>
            s.sample.sourceKind === "lab" &&
            !s.sample.label.endsWith("__healthy") &&
            s.ranked[0] === s.sample.label,
        )
        .map((s) => ({
          label: s.sample.label,
          classIndex: metadata.classes.indexOf(s.sample.label),
          analysis: s.analysis,
        })),
    ),
  );

  const qualityLimit = Number(values["quality-limit"] ?? 400);
  const step = Math.max(1, Math.floor(leaves.length / qualityLimit));
  const qualitySamples = leaves
    .filter((_, i) => i % step === 0)
    .slice(0, qualityLimit)
    .map((s) => s.sample);
  tables.push(...(await qualityTables(analyser, qualitySamples, clean)));
  await analyser.close();

  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  const header =
    `Model \`${metadata.model_version}\`, ${samples.length} test-split photos${samples.length < total ? ` of ${total} (an even sample, --limit ${limit})` : ""}, ` +
    `served path (Node preprocessing + ONNX Runtime, temperature ${metadata.temperature}, unsure below ${threshold}), ${seconds} s. ` +
    `"Unsure or rejected": no disease named (calibrated top probability below the threshold, or judged not a plant).`;
  const markdown = [header, ...tables.map(markdownTable)].join("\n\n");
  console.log(markdown);
  if (values.write) {
    writeFileSync(README, replaceSection(existsSync(README) ? readFileSync(README, "utf8") : "", markdown));
    console.error(`wrote the served-path section of ${path.relative(ROOT_DIR, README)}`);
  }
}

await main();
