import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import type { Redis } from "ioredis";
import type { Knowledge } from "../../src/diagnosis/kb.js";
import type { ResultStore } from "../../src/results/store.js";
import { awaitsOfficer } from "../../src/review/queue.js";
import { createLanguageMemory } from "./language.js";
import { createOutbox } from "./outbox.js";
import type { ChannelConfig, ChannelProvider, WebhookContext } from "./provider.js";
import type { ChannelQueue } from "./queue.js";
import { createRedisGate } from "./redis-gate.js";
import { configuredProviders } from "./registry.js";
import { createTexts, type Texts } from "./render/texts.js";

export interface ChannelsPluginOptions {
  config: ChannelConfig;
  /** channels/providers.ts PROVIDERS; each one whose credentials are set gets its webhooks. */
  providers: readonly ChannelProvider[];
  redis: Redis;
  /** The same store the REST sink writes to, so USSD finds results from every source. */
  store: ResultStore;
  /** Shared with the result sink's deliveries; its owner closes it. */
  queue: ChannelQueue;
  /** The knowledge base: USSD shows every result from it, in the caller's language. */
  knowledge: Knowledge;
  /** Redis key prefix of the language memory (tests use their own). */
  keyPrefix?: string;
  texts?: Texts;
}

/**
 * The webhooks of every configured provider. Each provider lives in its own encapsulated context, so the
 * form-body parser the SMS providers need does not leak into the REST API's routes.
 */
async function channels(app: FastifyInstance, options: ChannelsPluginOptions): Promise<void> {
  const { config, redis, store, queue, knowledge } = options;
  // With Redis down every webhook still answers within a second: its Redis work goes through the gate.
  const gate = createRedisGate(redis);
  const context: WebhookContext = {
    config,
    enqueue: (message) => gate(() => queue.enqueueInbound(message)),
    outbox: createOutbox({ redis, enqueue: queue.enqueueInbound, logger: app.log }),
    gate,
    store,
    languages: createLanguageMemory(redis, options.keyPrefix),
    texts: options.texts ?? createTexts(),
    knowledge,
    view: { officerReview: awaitsOfficer },
  };
  for (const provider of configuredProviders(options.providers, config))
    await provider.registerWebhook(app, context);
}

export default fp(channels, { name: "channels", fastify: "5.x" });
