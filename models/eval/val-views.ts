/**
 * npx tsx models/eval/val-views.ts [--sources field_plantdoc,field_ibean,lab] [--threads N]
 *
 * Whether the views' agreement tells right answers from wrong ones better than the service's score, on the VAL
 * split only: each photo is read by the core's analyser as the service reads it, with the crop of its true class
 * given, and ranked by each score of view-scores.ts. Prints markdown; chooses and writes nothing. The rule the model
 * card quotes was written before its first run (models/training/tried/view-agreement-rule.md).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { createAnalyser } from "../../src/diagnosis/analyse.js";
import { cropOfClass } from "../../src/diagnosis/crops.js";
import { DATASETS_DIR, MODEL_PATH } from "../../test/diagnosis/helpers.js";
import { markdownTable } from "./report.js";
import { mapConcurrent, studyThreads } from "./run.js";
import { readSplit, SPLIT_FILE, statedCrop } from "./split.js";
import {
  bootstrapWins,
  coverageAt,
  type Ranked,
  rankedAccuracy,
  rightAmongMostSure,
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

const percent = (share: number) => `${(100 * share).toFixed(1)} %`;

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
  const samples = readSplit(SPLIT_FILE, "val").filter((s) => sources.includes(s.source));
  const analyser = await createAnalyser({ modelPath: MODEL_PATH, threads });
  const { metadata } = analyser;
  if (!metadata) throw new Error(`the model at ${MODEL_PATH} failed to load`);
  const photos = await mapConcurrent(samples, 2 * threads, async (sample) => {
    const analysis = await analyser.analyse(await readFile(path.join(DATASETS_DIR, sample.file)));
    const model = analysis.model;
    // A photo judged no plant is never answered, whatever the score.
    if (!analysis.isPlant || !model) return { sample, views: null };
    const crop = statedCrop(sample);
    const kept = metadata.classes.flatMap((id, k) => (cropOfClass(id) === crop ? [{ id, k }] : []));
    const views = [model.centre, ...model.crops, ...(model.zoom ? [model.zoom] : [])].map((view) => {
      const within = kept.map(({ k }) => view.probabilities[k]!);
      const total = within.reduce((a, b) => a + b, 0);
      return within.map((p) => p / total);
    });
    return { sample, views, ids: kept.map(({ id }) => id) };
  });
  await analyser.close();

  for (const source of sources) {
    const all = photos.filter((p) => p.sample.source === source);
    const read = all.flatMap((p) => (p.views && p.ids ? [{ ...p, views: p.views, ids: p.ids }] : []));
    const ranked = VIEW_SCORES.map(([, score]) =>
      read.map((p): Ranked => {
        const { score: s, top } = score(p.views);
        return { score: s, right: p.ids[top] === p.sample.label };
      }),
    );
    const target = TARGETS[source]!;
    const [shipped] = ranked as [Ranked[]];
    console.log(
      `${markdownTable({
        title: `${source}: ${all.length} val photos, ${read.length} judged a plant, crop given`,
        head: [
          "score",
          `answered at ${Math.round(100 * target)} % right`,
          "mean accuracy over the most sure k",
          ...SHARES.map((s) => `right among the most sure ${Math.round(100 * s)} %`),
          "ranks better than the service's (bootstrap)",
        ],
        rows: VIEW_SCORES.map(([name], i) => [
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
