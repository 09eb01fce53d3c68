import type { FastifyContextConfig } from "fastify";

/**
 * Route config of every provider webhook. The API's per-IP limits do not apply: all of a provider's webhooks
 * come from a handful of its addresses, so a per-IP budget would throttle every farmer at once. The webhooks
 * are authenticated, and the queue absorbs bursts.
 */
export const WEBHOOK_ROUTE_CONFIG: FastifyContextConfig = { rateLimit: false };
