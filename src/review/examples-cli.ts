import { Redis } from "ioredis";
import { ConfigError, loadConfig, redisNamespaces } from "../config.js";
import { createExampleStore, type ExampleStore } from "./examples.js";

/**
 * Runs `npm run dataset:<name>` on the service's labelled examples (in its Redis, REDIS_URL): `work` gets the
 * store and returns the exit code; a configuration or Redis error is one line and exit 1.
 */
export function runExamplesCli(name: string, work: (examples: ExampleStore) => Promise<number>): void {
  const main = async (): Promise<number> => {
    const config = loadConfig();
    if (!config.redisUrl) {
      console.error(
        `dataset:${name}: REDIS_URL is needed: labelled examples are kept in the service's Redis`,
      );
      return 1;
    }
    const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2 });
    try {
      return await work(createExampleStore(redis, { prefix: redisNamespaces(config).keys }));
    } finally {
      redis.disconnect();
    }
  };
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(
        `dataset:${name}: ${error instanceof ConfigError ? error.message : (error as Error).message}`,
      );
      process.exit(1);
    },
  );
}
