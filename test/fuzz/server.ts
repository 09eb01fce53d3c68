import path from "node:path";
import { buildApp } from "../../src/app.js";
import { loadConfig, ROOT_DIR } from "../../src/config.js";
import { createDiagnoser } from "../../src/diagnosis/diagnose.js";
import { heic, photo } from "../api/support/images.js";
import type { Seeds } from "./uploads.js";

/** The service as `npm start` builds it (real core and model), listening on loopback, for the fuzzers. */
export async function startFuzzTarget() {
  const diagnoser = await createDiagnoser({
    modelPath: path.join(ROOT_DIR, "models/disease-classifier.onnx"),
    threads: 1,
  });
  // Limits lifted: the fuzzer measures how uploads are answered, not the per-IP budget.
  const config = loadConfig({ RATE_LIMIT_DIAGNOSIS: "100000", RATE_LIMIT_OTHER: "100000" });
  const app = await buildApp({ config, diagnoser }, { logger: false });
  const url = await app.listen({ port: 0, host: "127.0.0.1" });
  const jpeg = await photo(96, 72, "jpeg");
  const seeds: Seeds = {
    images: [jpeg, await photo(80, 60, "png"), await photo(64, 64, "webp"), await heic(jpeg)],
  };
  return {
    port: Number(new URL(url).port),
    seeds,
    close: async () => {
      await app.close();
      await diagnoser.close();
    },
  };
}
