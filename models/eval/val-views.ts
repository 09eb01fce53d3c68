/**
 * npx tsx models/eval/val-views.ts [--sources field_plantdoc,field_ibean,lab] [--threads N]
 *
 * Whether another score tells right answers from wrong ones better than the service's, on the VAL split only: each
 * photo is read by the core's analyser as the service reads it, with the crop of its true class given, and ranked
 * by each score of view-scores.ts and by the learned score of learned-score.ts (fitted on the field val photos,
 * which it scores out of fold). Prints markdown; chooses and writes nothing. The rules the model card quotes were
 * written before the first run of their scores (models/training/tried/view-agreement-rule.md, crop-mass-rule.md).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { createAnalyser } from "../../src/diagnosis/analyse.js";
import { cropOfClass } from "../../src/diagnosis/crops.js";
import { DATASETS_DIR, MODEL_PATH } from "../../test/diagnosis/helpers.js";
import {
  fitLogistic,
  LEARNED_FEATURES,
  learnedFeatures,
  outOfFold,
  predictLogistic,
} from "./learned-score.js";
import { markdownTable } from "./report.js";
import { mapConcurrent, studyThreads } from "./run.js";
import { readSplit, SPLIT_FILE, statedCrop } from "./split.js";
import {
  bootstrapWins,
  coverageAt,
  type PhotoReading,
  type Ranked,
  type Reading,
  rankedAccuracy,
  rightAmongMostSure,
  served,
  VIEW_SCORES,
} from "./view-scores.js";

/** The answered accuracy each source is held to: the issue's field target, and the margins the export uses. */
const TARGETS: Record<string, number> = {
  field_plantdoc: 0.85,
  maize_plantdoc: 0.85,
  field_ibean: 0.92,
  lab: 0.97,
};
const SHARES = [0.1, 0.2, 0.3, 0.4];
const RESAMPLES = 2000;
/** The learned score is fitted on these photos (models/training/tried/crop-mass-rule.md). */
const LEARNED_ON = "field_plantdoc";
const FOLDS = 10;
const PENALTY = 1;

const percent = (share: number) => `${(100 * share).toFixed(1)} %`;
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sources: { type: "string", default: "field_plantdoc,field_ibean,lab" },
      threads: { type: "string", default: "2" },
    },
  });
  const threads = studyThreads(values.threads);
  const sources = values.sources.split(",");
  const unknown = sources.filter((s) => !(s in TARGETS));
  if (unknown.length > 0) throw new Error(`no answered-accuracy target for ${unknown.join(", ")}`);
  if (!sources.includes(LEARNED_ON)) throw new Error(`the learned score is fitted on ${LEARNED_ON}: list it`);
  const samples = readSplit(SPLIT_FILE, "val").filter((s) => sources.includes(s.source));
  const analyser = await createAnalyser({ modelPath: MODEL_PATH, threads });
  const { metadata } = analyser;
  if (!metadata) throw new Error(`the model at ${MODEL_PATH} failed to load`);
  const photos = await mapConcurrent(samples, 2 * threads, async (sample) => {
    const analysis = await analyser.analyse(await readFile(path.join(DATASETS_DIR, sample.file)));
    const model = analysis.model;
    // A photo judged no plant is never answered, whatever the score.
    if (!analysis.isPlant || !model) return { sample, reading: null, ids: [] };
    const crop = statedCrop(sample);
    const kept = metadata.classes.flatMap((id, k) => (cropOfClass(id) === crop ? [{ id, k }] : []));
    const withinCrop = (probabilities: Float64Array) => kept.map(({ k }) => probabilities[k]!);
    const views = [model.centre, ...model.crops, ...(model.zoom ? [model.zoom] : [])].map((view) => {
      const within = withinCrop(view.probabilities);
      return within.map((p) => p / sum(within));
    });
    const mean = withinCrop(model.probabilities);
    const mass = sum(mean);
    const reading: PhotoReading = { views, mean: mean.map((p) => p / mass), mass, distance: model.distance };
    return { sample, reading, ids: kept.map(({ id }) => id) };
  });
  await analyser.close();

  const read = photos.flatMap((p) => (p.reading ? [{ ...p, reading: p.reading }] : []));
  const right = (p: (typeof read)[number], top: number) => p.ids[top] === p.sample.label;
  const servedTop = (p: (typeof read)[number]) => served(p.reading).top;
  // The learned score: the field val photos out of fold, every other photo by the fit on all of them.
  const field = read.filter((p) => p.sample.source === LEARNED_ON);
  const fieldX = field.map((p) => learnedFeatures(p.reading));
  const fieldY = field.map((p) => right(p, servedTop(p)));
  const heldOut = outOfFold(fieldX, fieldY, FOLDS, 0, PENALTY);
  const learned = new Map(field.map((p, i) => [p, heldOut[i]!]));
  const model = fitLogistic(fieldX, fieldY, PENALTY);
  console.log(
    `Learned score, fitted on ${field.length} ${LEARNED_ON} val photos (standardised weights): intercept ` +
      `${model.weights[0]!.toFixed(3)}, ${LEARNED_FEATURES.map((f, j) => `${f} ${model.weights[j + 1]!.toFixed(3)}`).join(", ")}\n`,
  );
  const scores: [string, (p: (typeof read)[number]) => Reading][] = [
    ...VIEW_SCORES.map(([name, score]): [string, (p: (typeof read)[number]) => Reading] => [
      name,
      (p) => score(p.reading),
    ]),
    [
      `learned: logistic regression on ${LEARNED_FEATURES.join(", ")} (${LEARNED_ON} out of ${FOLDS} folds)`,
      (p) => ({
        score: learned.get(p) ?? predictLogistic(model, learnedFeatures(p.reading)),
        top: servedTop(p),
      }),
    ],
  ];

  for (const source of sources) {
    const all = photos.filter((p) => p.sample.source === source);
    const ofSource = read.filter((p) => p.sample.source === source);
    const ranked = scores.map(([, score]) =>
      ofSource.map((p): Ranked => {
        const { score: s, top } = score(p);
        return { score: s, right: right(p, top) };
      }),
    );
    const target = TARGETS[source]!;
    const [shipped] = ranked as [Ranked[]];
    console.log(
      `${markdownTable({
        title: `${source}: ${all.length} val photos, ${ofSource.length} judged a plant, crop given`,
        head: [
          "score",
          `answered at ${Math.round(100 * target)} % right`,
          "mean accuracy over the most sure k",
          ...SHARES.map((s) => `right among the most sure ${Math.round(100 * s)} %`),
          "ranks better than the service's (bootstrap)",
        ],
        rows: scores.map(([name], i) => [
          name,
          percent(coverageAt(ranked[i]!, target, all.length)),
          rankedAccuracy(ranked[i]!).toFixed(4),
          ...SHARES.map((s) => percent(rightAmongMostSure(ranked[i]!, s))),
          i === 0 ? "–" : percent(bootstrapWins(ranked[i]!, shipped, RESAMPLES)),
        ]),
      })}\n`,
    );
  }
}

await main();
