import { BlockList, isIP } from "node:net";
import formbody from "@fastify/formbody";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { languageFromPhone } from "../core/language.js";
import type { Outbox } from "../core/outbox.js";
import { ChannelsUnavailableError, type RedisGate } from "../core/redis-gate.js";
import { ussdScreen } from "../core/render/ussd.js";
import { sameSecret } from "../core/secret.js";
import type { InboundMessage } from "../core/types.js";
import { WEBHOOK_ROUTE_CONFIG } from "../core/webhook-route.js";
import { type UssdDeps, ussdRespond } from "./ussd-menu.js";

export const AT_PATH_PREFIX = "/channels/africastalking";

type Form = Record<string, string | undefined>;

/** Africa's Talking's incoming-SMS callback (from, to, text, date, id, linkId) as one inbound message. */
export function parseAfricasTalkingSms(form: Form, receivedAt = new Date()): InboundMessage | undefined {
  const { id, from, to } = form;
  if (!id || !from || !to) return undefined;
  const text = form.text?.trim();
  return {
    provider: "africastalking",
    channel: "sms",
    messageId: id,
    from,
    to,
    ...(text ? { text } : {}),
    receivedAt: receivedAt.toISOString(),
  };
}

/** AT_ALLOWED_IPS: addresses or CIDR ranges; empty allows all (the path token still guards the webhook). */
export function ipAllowList(entries: string[]): ((ip: string) => boolean) | undefined {
  if (entries.length === 0) return undefined;
  const list = new BlockList();
  for (const entry of entries) {
    const [address = "", bits] = entry.split("/");
    const type = isIP(address) === 6 ? "ipv6" : "ipv4";
    if (bits) list.addSubnet(address, Number(bits), type);
    else list.addAddress(address, type);
  }
  return (ip) => {
    const bare = ip.replace(/^::ffff:/, "");
    return list.check(bare, isIP(bare) === 6 ? "ipv6" : "ipv4");
  };
}

// The token is the webhook's only secret and sits in its path: request logs show the path without it.
const HIDE_TOKEN = {
  req: (request: FastifyRequest) => ({
    method: request.method,
    url: request.url.replace(/^(\/channels\/africastalking\/)[^/?]+/, "$1[redacted]"),
    remoteAddress: request.ip,
  }),
};

export interface AfricasTalkingWebhookOptions {
  webhookToken: string;
  allowedIps: string[];
  enqueue: (message: InboundMessage) => Promise<void>;
  /** Where an SMS waits while Redis is down: Africa's Talking does not deliver a callback again. */
  outbox: Outbox;
  /** Bounds the USSD menu's Redis reads: a gateway hangs up after a few seconds. */
  gate: RedisGate;
  ussd: UssdDeps;
}

export async function africasTalkingWebhook(
  app: FastifyInstance,
  options: AfricasTalkingWebhookOptions,
): Promise<void> {
  await app.register(formbody);
  const allowed = ipAllowList(options.allowedIps);

  // Africa's Talking signs nothing: the secret path and the source address are all there is to check.
  app.addHook(
    "preHandler",
    async (request: FastifyRequest<{ Params: { token?: string } }>, reply: FastifyReply) => {
      const tokenOk = sameSecret(request.params.token, options.webhookToken);
      const ipOk = allowed ? allowed(request.ip) : true;
      if (tokenOk && ipOk) return;
      request.log.warn(
        { path: request.routeOptions.url, reason: tokenOk ? "address not allowed" : "wrong token" },
        "africastalking webhook refused",
      );
      return reply.code(403).send({ detail: "Forbidden", request_id: request.id });
    },
  );

  app.post(
    `${AT_PATH_PREFIX}/:token/sms`,
    { logSerializers: HIDE_TOKEN, config: WEBHOOK_ROUTE_CONFIG },
    async (request, reply) => {
      const message = parseAfricasTalkingSms((request.body ?? {}) as Form);
      if (!message) {
        request.log.warn("africastalking sms callback without id/from/to ignored");
        return reply.code(200).send();
      }
      try {
        await options.enqueue(message);
      } catch (error) {
        if (!(error instanceof ChannelsUnavailableError)) throw error;
        if (!options.outbox.keep(message)) {
          request.log.error(
            { reason: error.message },
            "africastalking sms lost: Redis is down and the outbox is full",
          );
          return reply.code(503).send({ detail: "Temporarily unavailable", request_id: request.id });
        }
      }
      return reply.code(200).send();
    },
  );

  app.post(
    `${AT_PATH_PREFIX}/:token/ussd`,
    { logSerializers: HIDE_TOKEN, config: WEBHOOK_ROUTE_CONFIG },
    async (request, reply) => {
      const form = (request.body ?? {}) as Form;
      const phoneNumber = form.phoneNumber ?? "";
      let answer: string;
      try {
        answer = await options.gate(() => ussdRespond({ phoneNumber, text: form.text ?? "" }, options.ussd));
      } catch (error) {
        if (!(error instanceof ChannelsUnavailableError)) throw error;
        // The saved language is in Redis too: the phone number's country decides, else English.
        const language = languageFromPhone(phoneNumber) ?? "en";
        request.log.warn({ reason: error.message, language }, "ussd answered busy: Redis is unavailable");
        answer = ussdScreen("END", options.ussd.texts(language, "busy"));
      }
      return reply.type("text/plain; charset=utf-8").send(answer);
    },
  );
}
