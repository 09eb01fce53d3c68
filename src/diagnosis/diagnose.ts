import { type Analyser, type Analysis, createAnalyser, type LeafView, type Logger } from "./analyse.js";
import { parseCrop } from "./crops.js";
import { leafDetections } from "./detections.js";
import { BusyError, type Diagnoser } from "./diagnoser.js";
import { createKnowledge, type Knowledge } from "./kb.js";
import { leafProbabilities, type ModelMetadata } from "./model/metadata.js";
import { assembleResult, detectionsOf, type ModelVerdict } from "./result.js";
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
  return diagnoserOf({ analyser, kb, logger: options.logger });
}

type Reading = NonNullable<Analysis["model"]>;

/** The diagnoser over an analyser and the disease texts, both already loaded. */
export function diagnoserOf(deps: { analyser: Analyser; kb: Knowledge; logger?: Logger }): Diagnoser {
  const { analyser, kb, logger } = deps;
  return {
    async diagnose(image, context, requestId) {
      const analysis = await analyser.analyse(image);
      const { metadata } = analyser;
      const reading = analysis.model;
      const model = metadata && reading ? verdict(reading, metadata, context) : null;
      const result = assembleResult(
        { requestId, context, isPlant: analysis.isPlant, qualityIssue: analysis.qualityIssue, model },
        kb,
      );
      // Only a diagnosed result asked for boxes draws them: then the other leaves are read, and only the boxes change.
      if (!context.includeBbox || result.outcome !== "diagnosed" || !metadata || !reading) return result;
      const otherLeaves = await reading.readOtherLeaves().catch((error: unknown) => {
        if (!(error instanceof BusyError)) throw error;
        // The answer is made: a queue too full for the extra leaves costs their boxes, not the answer.
        logger?.warn({ requestId }, "inference queue full: boxes from the answer's leaves only");
        return null;
      });
      if (!otherLeaves) return result;
      return {
        ...result,
        detections: detectionsOf(result.diagnoses, boxesOf(reading, metadata, context, otherLeaves)),
      };
    },
    modelReady: () => analyser.metadata !== null,
    close: () => analyser.close(),
  };
}

/**
 * The model's answer, given that the photo is judged a plant (CONTRACT step 6): the views' mean probabilities
 * over the leaf classes, renormalised; a crop we do not cover when no covered crop is stated and other_plant
 * reaches its threshold; the boxes of the leaves its answer read.
 */
function verdict(model: Reading, metadata: ModelMetadata, context: DiagnosisContext): ModelVerdict {
  const statedCrop = context.cropType ? parseCrop(context.cropType) : null;
  // A farmer who names one of our crops knows the plant better than the model does.
  const otherCrop = !statedCrop && model.otherPlantProbability >= metadata.other_plant_threshold;
  return {
    probabilities: leafProbabilities(model.probabilities, metadata.classes),
    otherCrop,
    unsureThreshold: metadata.unsure_threshold,
    boxes: boxesOf(model, metadata, context, []),
  };
}

/**
 * The boxes of one class (CONTRACT step 7): the leaves read on their own (the answer's crops, those filling the
 * view and `otherLeaves`) whose own reading names the class, within the stated crop.
 */
function boxesOf(
  model: Reading,
  metadata: ModelMetadata,
  context: DiagnosisContext,
  otherLeaves: LeafView[],
): ModelVerdict["boxes"] {
  const statedCrop = context.cropType ? parseCrop(context.cropType) : null;
  const leaves = [...model.crops, ...model.wholeLeaves, ...otherLeaves];
  return (classId) => leafDetections(leaves, model.centre.view, metadata.classes, classId, statedCrop);
}
