// `npm run jobs -- list | retry <id> | retry-all`: the failed channel jobs an operator looks at and replays.
import { Redis } from "ioredis";
import { loadConfig, redisNamespaces } from "../../src/config.js";
import { PROVIDERS } from "../providers.js";
import { listFailed, retryAllFailed, retryFailed } from "./failed-jobs.js";
import { createChannelQueue } from "./queue.js";
import { routingOwner } from "./registry.js";

const USAGE = "usage: npm run jobs -- list | retry <job id> | retry-all";

async function main(args: string[]): Promise<number> {
  const [command, id] = args;
  if (!command || !["list", "retry", "retry-all"].includes(command) || (command === "retry" && !id)) {
    console.error(USAGE);
    return 2;
  }
  const config = loadConfig();
  const { redisUrl } = config;
  if (!redisUrl) {
    console.error("REDIS_URL is not set: channel jobs live in Redis");
    return 1;
  }
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  const channelQueue = createChannelQueue({
    connection: redis,
    prefix: redisNamespaces(config).queue,
    routingOwner: routingOwner(PROVIDERS),
  });
  try {
    if (command === "list") {
      const failed = await listFailed(channelQueue.queue);
      if (failed.length === 0) console.log("no failed jobs");
      for (const job of failed) {
        console.log(
          `${job.id}\t${job.route}\tattempts=${job.attempts}\t${job.failedAt ?? "-"}\t${job.reason}`,
        );
      }
      return 0;
    }
    if (command === "retry") {
      const ok = await retryFailed(channelQueue, id!);
      console.log(ok ? `${id} queued again` : `${id} is not a failed job`);
      return ok ? 0 : 1;
    }
    console.log(`${await retryAllFailed(channelQueue)} failed jobs queued again`);
    return 0;
  } finally {
    await channelQueue.close();
    await redis.quit();
  }
}

process.exitCode = await main(process.argv.slice(2));
