import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import type { Redis } from "ioredis";
import type { Config } from "../../src/config.js";
import type { ResultStore } from "../../src/results/store.js";
import { africasTalkingWebhook } from "../africastalking/webhook.js";
import { telegramWebhook } from "../telegram/webhook.js";
import { twilioWebhook } from "../twilio/webhook.js";
import { createLanguageMemory } from "./language.js";
import { createOutbox } from "./outbox.js";
import type { ChannelQueue } from "./queue.js";
import { createRedisGate } from "./redis-gate.js";
import { createTexts, type Texts } from "./render/texts.js";
import type { SimpleKnowledge } from "./render/view.js";
import type { InboundMessage } from "./types.js";

export interface ChannelsPluginOptions {
  config: Pick<Config, "twilio" | "telegram" | "africasTalking" | "publicBaseUrl">;
  redis: Redis;
  /** The same store the REST sink writes to, so USSD finds results from every source. */
  store: ResultStore;
  /** Shared with the result sink's deliveries; its owner closes it. */
  queue: ChannelQueue;
  /** Redis key prefix of the language memory (tests use their own). */
  keyPrefix?: string;
  texts?: Texts;
  /** simpleKnowledge(kb): lets USSD show any result at farmer level in the caller's language; without it,
   *  results are shown with the texts stored with them. */
  knowledge?: SimpleKnowledge;
}

/**
 * The webhooks of every configured provider. Each provider lives in its own encapsulated context, so the
 * form-body parser the SMS providers need does not leak into the REST API's routes.
 */
async function channels(app: FastifyInstance, options: ChannelsPluginOptions): Promise<void> {
  const { config, redis, store, queue } = options;
  // With Redis down every webhook still answers within a second: its Redis work goes through the gate.
  const gate = createRedisGate(redis);
  const enqueue = (message: InboundMessage) => gate(() => queue.enqueueInbound(message));

  if (config.twilio) {
    const { authToken } = config.twilio;
    const publicBaseUrl = config.publicBaseUrl;
    if (!publicBaseUrl) throw new Error("the Twilio webhook needs PUBLIC_BASE_URL");
    await app.register(twilioWebhook, { authToken, publicBaseUrl, enqueue });
  }
  if (config.telegram) {
    await app.register(telegramWebhook, { webhookSecret: config.telegram.webhookSecret, enqueue });
  }
  if (config.africasTalking) {
    const { webhookToken, allowedIps } = config.africasTalking;
    const ussd = {
      store,
      languages: createLanguageMemory(redis, options.keyPrefix),
      texts: options.texts ?? createTexts(),
      ...(options.knowledge ? { knowledge: options.knowledge } : {}),
    };
    const outbox = createOutbox({ redis, enqueue: queue.enqueueInbound, logger: app.log });
    await app.register(africasTalkingWebhook, { webhookToken, allowedIps, enqueue, outbox, gate, ussd });
  }
}

export default fp(channels, { name: "channels", fastify: "5.x" });
