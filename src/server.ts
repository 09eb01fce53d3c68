import closeWithGrace from "close-with-grace";
import type { Redis } from "ioredis";
import channelsPlugin from "../channels/core/plugin.js";
import { createChannelQueue } from "../channels/core/queue.js";
import { anyChannelConfigured, deliverableChannels, routingOwner } from "../channels/core/registry.js";
import { PROVIDERS } from "../channels/providers.js";
import { buildApp } from "./app.js";
import { readConfigOrExit, redisNamespaces } from "./config.js";
import { createDiagnoser } from "./diagnosis/diagnose.js";
import { createKnowledge } from "./diagnosis/kb.js";
import { createLogger } from "./logger.js";
import { stopWithNpm } from "./npm-parent.js";
import { createRedis, untilReady } from "./redis.js";
import { createRecords } from "./results/records.js";
import { createResultSink } from "./results/sink.js";
import { createStaffStore } from "./staff/accounts.js";
import { configureImageDecoding } from "./threads.js";

const config = readConfigOrExit();
const logger = createLogger(config.logLevel);
configureImageDecoding();

/** Waits briefly for Redis so the first requests share limits; a Redis that is down only degrades /health. */
async function connectRedis(url: string): Promise<Redis> {
  const redis = createRedis(url, logger, { name: "crop-diagnosis-api" });
  if (!(await untilReady(redis, 5000)))
    logger.warn("redis not ready yet; rate limits are per instance until it is");
  return redis;
}

const redis = config.redisUrl ? await connectRedis(config.redisUrl) : undefined;
const [diagnoser, knowledge] = await Promise.all([
  createDiagnoser({ modelPath: config.modelPath, threads: config.inferenceThreads, logger }),
  createKnowledge(),
]);
// Every REST result is stored with its photo for look-ups, review and partners (in Redis, or in memory
// without it); with channels configured, results whose user_data names a channel are also queued for delivery.
const namespaces = redisNamespaces(config);
const records = createRecords(redis, { prefix: namespaces.keys });
const store = records.store;
const ownerOf = routingOwner(PROVIDERS);
const queue =
  redis && anyChannelConfigured(PROVIDERS, config)
    ? createChannelQueue({ connection: redis, prefix: namespaces.queue, routingOwner: ownerOf })
    : undefined;
if (!config.sessionSecret && !redis)
  logger.warn("CONSOLE_SESSION_SECRET is not set: console sessions end when this process stops");
const resultSink = createResultSink({
  record: records.record,
  enqueueDelivery: queue?.enqueueDelivery,
  deliverable: deliverableChannels(PROVIDERS, config),
  logger,
  ownerOf,
});
const staff = createStaffStore(redis, { prefix: namespaces.keys, file: config.staffFile });
const app = await buildApp(
  {
    config,
    diagnoser,
    redis,
    resultSink,
    deliverable: queue ? deliverableChannels(PROVIDERS, config) : new Set(),
    records,
    staff,
    knowledge,
    ...(queue ? { enqueueAnswer: queue.enqueueAnswer, enqueueForget: queue.enqueueForget } : {}),
  },
  { logger, rateLimitKeyPrefix: namespaces.rateLimits, keyPrefix: namespaces.keys },
);
// The provider webhooks join the same server; the REST app itself (and its tests) knows no provider.
if (redis && queue)
  await app.register(channelsPlugin, {
    config,
    providers: PROVIDERS,
    redis,
    store,
    queue,
    knowledge,
    keyPrefix: namespaces.keys,
  });

// SIGTERM/SIGINT: stop accepting, let in-flight requests finish (app.close), then release the model and
// Redis. A second signal or 10 s without finishing exits at once.
closeWithGrace({ delay: 10_000, logger }, async ({ signal, err }) => {
  if (err) logger.error({ err }, "closing after an unexpected error");
  else logger.info({ signal }, "shutting down");
  await app.close();
  await queue?.close();
  await diagnoser.close();
  await redis?.quit();
});

stopWithNpm(() => {
  logger.warn("npm, which started this server, is gone: shutting down");
  process.kill(process.pid, "SIGTERM");
});

try {
  await app.listen({ port: config.port, host: config.host });
} catch (err) {
  logger.fatal({ err }, "could not start the server");
  process.exit(1);
}
