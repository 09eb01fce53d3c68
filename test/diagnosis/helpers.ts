import { existsSync } from "node:fs";
import path from "node:path";
import { ROOT_DIR } from "../../src/config.js";

/** The committed model: model-dependent tests fail (never pass vacuously) when it is missing. */
export const MODEL_PATH = path.join(ROOT_DIR, "models", "disease-classifier.onnx");

/** The shared datasets sit beside the repository (../shared); absent on machines without them. */
export const SHARED_DIR = path.resolve(ROOT_DIR, "..", "shared");
export const DATASETS_DIR = path.join(SHARED_DIR, "datasets");
export const HAVE_DATASETS = existsSync(DATASETS_DIR);
