// `npm run dataset:export -- DIR`: the photos officers confirmed or corrected, as a training set in the layout
// of ../shared/datasets/leaf-photos. Reads the labelled examples from the service's Redis (REDIS_URL).
import path from "node:path";
import { Redis } from "ioredis";
import { ConfigError, loadConfig, redisNamespaces } from "../config.js";
import { createExampleStore } from "./examples.js";
import { exportDataset } from "./export.js";

async function main(args: string[]): Promise<number> {
  const [dir, ...rest] = args;
  if (!dir || rest.length > 0 || dir.startsWith("-")) {
    console.error("usage: npm run dataset:export -- DIR   (a new or empty directory)");
    return 2;
  }
  const config = loadConfig();
  if (!config.redisUrl) {
    console.error("dataset:export: REDIS_URL is needed: labelled examples are kept in the service's Redis");
    return 1;
  }
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2 });
  try {
    const target = path.resolve(dir);
    const examples = createExampleStore(redis, { prefix: redisNamespaces(config).keys });
    const summary = await exportDataset(examples, target, (done, total) => {
      if (process.stderr.isTTY) process.stderr.write(`\r${done}/${total} photos`);
    });
    if (process.stderr.isTTY) process.stderr.write("\n");
    for (const [label, count] of Object.entries(summary.classes)) console.log(`${label}\t${count}`);
    for (const s of summary.skipped) console.error(`skipped ${s.id}: ${s.reason}`);
    console.log(
      `${summary.photos} photos in ${Object.keys(summary.classes).length} classes written to ${target}`,
    );
    return 0;
  } finally {
    redis.disconnect();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(
      `dataset:export: ${error instanceof ConfigError ? error.message : (error as Error).message}`,
    );
    process.exit(1);
  },
);
