// `npm run worker`: runs channel jobs (photos in, replies out), apart from the API so each scales alone.
import { writeFile } from "node:fs/promises";
import { readConfigOrExit, redisNamespaces } from "../../src/config.js";
import { createDiagnoser } from "../../src/diagnosis/diagnose.js";
import { createKnowledge } from "../../src/diagnosis/kb.js";
import { createLogger, logUncaught } from "../../src/logger.js";
import { stopWithNpm } from "../../src/npm-parent.js";
import { createRedis } from "../../src/redis.js";
import { createRecords } from "../../src/results/records.js";
import { awaitsOfficer } from "../../src/review/queue.js";
import { configureImageDecoding } from "../../src/threads.js";
import { WORKER_HEARTBEAT_MS } from "../limits.js";
import { PROVIDERS } from "../providers.js";
import { createExpertLoop } from "./expert-loop.js";
import { createLanguageMemory } from "./language.js";
import { createChannelQueue } from "./queue.js";
import { anyChannelConfigured, createAdapters, destinationOf, farmerKeys, routingOwner } from "./registry.js";
import { createRenderer } from "./render/index.js";
import { createTexts } from "./render/texts.js";
import { createReplyWindows } from "./reply-window.js";
import { createChannelWorker } from "./worker.js";
import { readWorkerSettings, type WorkerSettings } from "./worker-settings.js";

const config = readConfigOrExit();
const logger = createLogger(config.logLevel);
logUncaught(logger);
configureImageDecoding();
if (!config.redisUrl || !anyChannelConfigured(PROVIDERS, config)) {
  logger.fatal("the worker needs REDIS_URL and at least one channel's credentials (see docs/channels.md)");
  process.exit(1);
}
let settings: WorkerSettings;
try {
  settings = readWorkerSettings(PROVIDERS);
} catch (error) {
  logger.fatal((error as Error).message);
  process.exit(1);
}

// BullMQ's blocking connection must retry forever rather than fail a command mid-wait.
const redis = createRedis(config.redisUrl, logger, { name: "crop-diagnosis-worker", blocking: true });
const [diagnoser, knowledge] = await Promise.all([
  createDiagnoser({ modelPath: config.modelPath, threads: config.inferenceThreads, logger }),
  createKnowledge(),
]);
const adapters = createAdapters(PROVIDERS, config, settings.apiRoots);
const namespaces = redisNamespaces(config);
const queue = createChannelQueue({
  connection: redis,
  prefix: namespaces.queue,
  routingOwner: routingOwner(PROVIDERS),
});
const records = createRecords(redis, { prefix: namespaces.keys });
const renderer = createRenderer(createTexts());
const worker = createChannelWorker({
  connection: redis,
  queue: queue.queue,
  turns: queue.turns,
  prefix: namespaces.queue,
  lockDuration: settings.lockDurationMs,
  stalledInterval: settings.stalledIntervalMs,
  // A second job downloads or sends while the first holds the inference pool.
  concurrency: Math.max(2, config.inferenceThreads * 2),
  diagnoser,
  records,
  languages: createLanguageMemory(redis, namespaces.keys),
  renderer,
  adapters,
  windows: createReplyWindows({ redis, prefix: namespaces.keys, farmerKey: farmerKeys(PROVIDERS) }),
  knowledge,
  destination: (routing) => destinationOf(routing, PROVIDERS, config),
  farmerKey: farmerKeys(PROVIDERS),
  // Unsure, unsupported and low-confidence answers say an officer will look (they are in the review queue).
  view: { officerReview: awaitsOfficer },
  // "Did this help?" under answers, and the photo notice on a farmer's first message.
  expertLoop: createExpertLoop({ records, renderer }),
  logger,
});
// BullMQ's id for this worker is the first part of each lock it holds in Redis: which process has a job.
logger.info({ channels: [...adapters.keys()], workerId: worker.id }, "channel worker started");

// A worker whose event loop is stuck, or whose consumer stopped, writes no heartbeat: its liveness probe restarts it.
let heartbeatFailed = false;
const beat = () => {
  if (!worker.isRunning()) return;
  writeFile(settings.heartbeatFile, new Date().toISOString()).then(
    () => {
      heartbeatFailed = false;
    },
    (error: unknown) => {
      if (!heartbeatFailed)
        logger.error({ err: error, file: settings.heartbeatFile }, "heartbeat not written");
      heartbeatFailed = true;
    },
  );
};
beat();
const heartbeat = setInterval(beat, WORKER_HEARTBEAT_MS);
heartbeat.unref();

/** Within the 30 s compose and Kubernetes give a container to stop. */
const SHUTDOWN_DEADLINE_MS = 25_000;

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  clearInterval(heartbeat);
  if (redis.status !== "ready") {
    // No job can be finished or handed back without Redis; each is taken over once its lock lapses.
    logger.warn({ signal, redis: redis.status }, "Redis is unavailable: exiting without waiting for jobs");
    redis.disconnect();
    await diagnoser.close();
    process.exit(0);
  }
  logger.info({ signal }, "finishing active jobs before exit");
  // Redis may fail meanwhile, and BullMQ's close would wait for it.
  setTimeout(() => {
    logger.warn(
      { deadlineMs: SHUTDOWN_DEADLINE_MS, redis: redis.status },
      "shutdown did not finish in time; exiting (an unfinished job is taken over once its lock lapses)",
    );
    process.exit(1);
  }, SHUTDOWN_DEADLINE_MS).unref();
  // close() waits for the jobs in flight; a job it cannot finish is taken over by another worker once its lock lapses.
  await worker.close();
  await queue.close();
  await diagnoser.close();
  await redis.quit();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
stopWithNpm(() => void shutdown("npm gone"));
