import type { FastifyInstance } from "fastify";
import type { Config } from "../../src/config.js";
import type { Knowledge } from "../../src/diagnosis/kb.js";
import type { ResultStore } from "../../src/results/store.js";
import type { Routing } from "../../src/results/types.js";
import type { LanguageMemory } from "./language.js";
import type { Outbox } from "./outbox.js";
import type { RedisGate } from "./redis-gate.js";
import type { Texts } from "./render/texts.js";
import type { ViewOptions } from "./render/view.js";
import type { Adapter, InboundMessage } from "./types.js";

export type ChannelConfig = Pick<Config, "twilio" | "telegram" | "africasTalking" | "publicBaseUrl">;

/** What a provider's webhooks may use: the queue's entry, and what answers at once (USSD) needs. */
export interface WebhookContext {
  config: ChannelConfig;
  /**
   * Queues one inbound message; the same provider message id twice is one job. With Redis down it fails
   * fast with ChannelsUnavailableError (redis-gate.ts): a provider that delivers again is answered 503
   * (deferDelivery), one that does not keeps the message in the outbox.
   */
  enqueue(message: InboundMessage): Promise<void>;
  /** Where a message waits while Redis is down, for a provider that does not deliver a webhook again. */
  outbox: Outbox;
  /** Bounds other Redis work a webhook does (the USSD menu's reads). */
  gate: RedisGate;
  store: ResultStore;
  languages: LanguageMemory;
  texts: Texts;
  knowledge: Knowledge;
  /** How results read here (USSD): "an officer will look" on those in the review queue, as the worker says. */
  view: ViewOptions;
}

/** How a provider sends a REST result that `user_data` routes to one of the routing channels. */
export interface Route {
  /** The provider's channel the result goes out on. */
  channel: string;
  /** Higher wins when several configured providers can take the same routing channel. */
  preference: number;
  address(routing: Routing): string | undefined;
}

/**
 * Everything the channel core knows about a provider. The provider's folder owns the rest: its webhook
 * payloads and their schemas, its API, its signature or token checks.
 */
export interface ChannelProvider {
  id: string;
  /** Its credentials are set. */
  configured(config: ChannelConfig): boolean;
  /** The variable that points its API at another base (a self-hosted server, a staging stand-in). */
  apiRoot: { variable: string; default(config: ChannelConfig): string };
  /** The key a farmer's language, last result and reply order hang on, from their address here. */
  farmerKey(address: string): string;
  registerWebhook(app: FastifyInstance, context: WebhookContext): Promise<void>;
  createAdapter(config: ChannelConfig, apiRoot: string): Adapter;
  routes: Partial<Record<Routing["channel"], Route>>;
  /** Whether this configuration can send on a routing channel (Twilio needs a sender per channel). */
  canRoute(channel: Routing["channel"], config: ChannelConfig): boolean;
}
