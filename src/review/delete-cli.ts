// `npm run dataset:delete -- CODE|REQUEST_ID ...`: deletes labelled examples, also those whose result has expired
// (the console's delete button is on the result's page, which lives 30 days). Reads the service's Redis.
import { Redis } from "ioredis";
import { ConfigError, loadConfig, redisNamespaces } from "../config.js";
import { normalizeShortCode } from "../results/short-code.js";
import { createExampleStore } from "./examples.js";

async function main(args: string[]): Promise<number> {
  if (args.length === 0 || args.some((a) => a.startsWith("-"))) {
    console.error(
      "usage: npm run dataset:delete -- CODE|REQUEST_ID ...   (a result's code, e.g. K7M4QX, or its id)",
    );
    return 2;
  }
  const config = loadConfig();
  if (!config.redisUrl) {
    console.error("dataset:delete: REDIS_URL is needed: labelled examples are kept in the service's Redis");
    return 1;
  }
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2 });
  try {
    const examples = createExampleStore(redis, { prefix: redisNamespaces(config).keys });
    const all = await examples.list();
    let missing = 0;
    for (const arg of args) {
      const code = normalizeShortCode(arg);
      const found = all.find((e) => e.id === arg || (code !== undefined && e.code === code));
      if (found && (await examples.delete(found.id))) console.log(`deleted ${found.code} (${found.id})`);
      else {
        console.error(`dataset:delete: no labelled example ${arg}`);
        missing++;
      }
    }
    return missing > 0 ? 1 : 0;
  } finally {
    redis.disconnect();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(
      `dataset:delete: ${error instanceof ConfigError ? error.message : (error as Error).message}`,
    );
    process.exit(1);
  },
);
