import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

/**
 * Route config of every provider webhook. The API's per-IP limits do not apply: all of a provider's webhooks
 * come from a handful of its addresses, so a per-IP budget would throttle every farmer at once. The webhooks
 * are authenticated, and the queue absorbs bursts.
 */
export const WEBHOOK_ROUTE_CONFIG: FastifyContextConfig = { rateLimit: false };

/** How a provider's webhook acknowledges a request it takes (and so does not re-send). */
export type Acknowledge = (reply: FastifyReply) => FastifyReply;

/**
 * An authenticated webhook whose body is not the provider's shape (it failed the route's schema) or could
 * not be read at all: acknowledged as the provider expects, so it is not re-sent forever (a 4xx or 5xx makes
 * Telegram retry the update and hold back the ones after it; Twilio and Africa's Talking log an error or
 * retry), nothing queued, one warning that names what was wrong (never the body).
 */
export function ignoreMalformed(
  request: FastifyRequest,
  reply: FastifyReply,
  provider: string,
  acknowledge: Acknowledge,
  problem: string,
): FastifyReply {
  request.log.warn({ provider, problem }, `${provider} webhook body ignored: not the provider's shape`);
  return acknowledge(reply);
}

/**
 * Within one provider's webhook context: a body that could not be parsed (bad JSON, an empty body) on a
 * request that passed the provider's authentication gets the same treatment. Authentication runs before
 * parsing (onRequest) or right after it (preValidation); an unauthenticated request is refused before.
 */
export function acknowledgeUnreadable(
  app: FastifyInstance,
  provider: string,
  acknowledge: (request: FastifyRequest) => Acknowledge,
): void {
  app.setErrorHandler((error: Error & { code?: string; statusCode?: number }, request, reply) => {
    const unreadable =
      error.code === "FST_ERR_CTP_INVALID_JSON_BODY" ||
      error.code === "FST_ERR_CTP_EMPTY_JSON_BODY" ||
      error.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE";
    if (unreadable) return ignoreMalformed(request, reply, provider, acknowledge(request), error.code!);
    throw error;
  });
}
