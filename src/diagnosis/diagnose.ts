import { type Analysis, createAnalyser, type Logger } from "./analyse.js";
import { conditionOfClass, parseCrop } from "./crops.js";
import type { Diagnoser } from "./diagnoser.js";
import { createKnowledge, type Knowledge } from "./kb.js";
import { camBoxes } from "./model/cam.js";
import type { ModelMetadata } from "./model/metadata.js";
import { NON_PLANT_CLASS, OTHER_PLANT_CLASS } from "./model/metadata.js";
import type { ClassProbabilities } from "./narrowing.js";
import { assembleResult, type ModelVerdict } from "./result.js";
import type { DiagnosisContext } from "./types.js";

export interface DiagnoserOptions {
  modelPath: string;
  /** Worker threads for inference and HEIC decoding (one ONNX session, one core each). */
  threads: number;
  logger?: Logger;
  /** The disease texts; the knowledge base of src/diagnosis/knowledge by default. */
  knowledge?: Knowledge;
}

/**
 * The core's one entry point: image bytes + context → result, for the REST route, the CLI and the channel
 * worker. Throws `ImageError` for an unusable file (a 400); anything else thrown is a server fault.
 */
export async function createDiagnoser(options: DiagnoserOptions): Promise<Diagnoser> {
  const [analyser, kb] = await Promise.all([
    createAnalyser(options),
    options.knowledge ? Promise.resolve(options.knowledge) : createKnowledge(),
  ]);
  return {
    async diagnose(image, context, requestId) {
      const analysis = await analyser.analyse(image);
      return assembleResult(
        {
          requestId,
          context,
          isPlant: analysis.isPlant,
          qualityIssue: analysis.qualityIssue,
          model: analyser.metadata ? verdict(analysis, analyser.metadata, context) : null,
        },
        kb,
      );
    },
    modelReady: () => analyser.metadata !== null,
    close: () => analyser.close(),
  };
}

/** The model's answer as probabilities over the leaf classes, given that the photo is judged a plant. */
function verdict(
  analysis: Analysis,
  metadata: ModelMetadata,
  context: DiagnosisContext,
): ModelVerdict | null {
  const model = analysis.model;
  if (!model) return null;
  const leafShare = 1 - model.nonPlantProbability;
  const probabilities: ClassProbabilities = new Map();
  metadata.classes.forEach((id, i) => {
    if (id !== NON_PLANT_CLASS)
      probabilities.set(id, leafShare > 0 ? model.probabilities[i]! / leafShare : 0);
  });
  // A farmer who names one of our crops knows the plant better than the model does.
  const otherPlant = model.probabilities[metadata.classes.indexOf(OTHER_PLANT_CLASS)] ?? 0;
  const otherCrop =
    !parseCrop(context.cropType ?? "") &&
    otherPlant >= (metadata.other_plant_threshold ?? Number.POSITIVE_INFINITY);
  return {
    probabilities,
    otherCrop,
    unsureThreshold: metadata.unsure_threshold,
    boxes: (classId, probability) =>
      camBoxes(
        model.output.cam,
        model.output.camSize,
        metadata.classes.indexOf(classId),
        conditionOfClass(classId),
        probability,
        {
          resized: model.view.resized,
          crop: model.view.crop,
        },
      ),
  };
}
