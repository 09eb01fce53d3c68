import { BlockList, isIP } from "node:net";
import formbody from "@fastify/formbody";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Value } from "@sinclair/typebox/value";
import type { FastifyRequest } from "fastify";
import type { Language } from "../../src/diagnosis/types.js";
import { pathOf } from "../../src/logger.js";
import { languageFromPhone } from "../core/language.js";
import type { WebhookContext } from "../core/provider.js";
import { ChannelsUnavailableError } from "../core/redis-gate.js";
import { type UssdScreen, ussdScreens } from "../core/render/ussd.js";
import { sameSecret } from "../core/secret.js";
import type { InboundMessage } from "../core/types.js";
import { type UssdDeps, ussdRespond } from "../core/ussd-menu.js";
import {
  type Acknowledge,
  acknowledgeUnreadable,
  ignoreMalformed,
  WEBHOOK_ROUTE_CONFIG,
} from "../core/webhook-route.js";
import { AFRICAS_TALKING, africasTalkingFarmer } from "./farmer.js";
import { AfricasTalkingSms, AfricasTalkingUssd } from "./schema.js";

export const AT_PATH_PREFIX = "/channels/africastalking";

/** Africa's Talking's incoming-SMS callback as one inbound message. */
export function parseAfricasTalkingSms(form: AfricasTalkingSms, receivedAt = new Date()): InboundMessage {
  const text = form.text?.trim();
  return {
    provider: AFRICAS_TALKING,
    channel: "sms",
    messageId: form.id,
    from: form.from,
    to: form.to,
    owner: africasTalkingFarmer(form.from),
    phone: form.from,
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
    url: pathOf(request.url).replace(/^(\/channels\/africastalking\/)[^/]+/, "$1[redacted]"),
    remoteAddress: request.ip,
  }),
};

/** Africa's Talking's USSD protocol: CON keeps the session open for the next input, END closes it. */
function ussdText({ end, text }: UssdScreen): string {
  return `${end ? "END" : "CON"} ${text}`;
}

// Africa's Talking takes any 200 for an SMS callback; a USSD callback must show the caller a screen.
const smsOk: Acknowledge = (reply) => reply.code(200).send();
const ussdOk =
  (deps: UssdDeps, language: Language): Acknowledge =>
  (reply) =>
    reply
      .type("text/plain; charset=utf-8")
      .send(ussdText(ussdScreens(deps.texts, language).message("ussd.error")));

/**
 * The language the menu would answer this caller in: their pick, else their number's country, else English.
 * With Redis unavailable (the pick is kept there) the number's country decides.
 */
async function callerLanguage(phoneNumber: string, options: AfricasTalkingWebhookOptions): Promise<Language> {
  try {
    return await options.gate(() =>
      options.ussd.languages.resolve(africasTalkingFarmer(phoneNumber), { phone: phoneNumber }),
    );
  } catch (error) {
    if (!(error instanceof ChannelsUnavailableError)) throw error;
    return languageFromPhone(phoneNumber) ?? "en";
  }
}

/** A malformed request's phone number, when it is one: the apology is then in the caller's language. */
function readablePhone(body: unknown): string | undefined {
  const phone = (body as { phoneNumber?: unknown } | undefined)?.phoneNumber;
  return Value.Check(AfricasTalkingUssd.properties.phoneNumber, phone) ? phone : undefined;
}

export interface AfricasTalkingWebhookOptions {
  webhookToken: string;
  allowedIps: string[];
  enqueue: WebhookContext["enqueue"];
  /** Where an SMS waits while Redis is down: Africa's Talking does not deliver a callback again. */
  outbox: WebhookContext["outbox"];
  /** Bounds the USSD menu's Redis reads: a gateway hangs up after a few seconds. */
  gate: WebhookContext["gate"];
  ussd: UssdDeps;
}

export const africasTalkingWebhook: FastifyPluginAsyncTypebox<AfricasTalkingWebhookOptions> = async (
  app,
  options,
) => {
  await app.register(formbody);
  const allowed = ipAllowList(options.allowedIps);
  // A body that could not be parsed has no phone number to read: the apology is in English.
  acknowledgeUnreadable(app, AFRICAS_TALKING, (request) =>
    request.url.endsWith("/ussd") ? ussdOk(options.ussd, "en") : smsOk,
  );

  // Africa's Talking signs nothing: the secret path and the source address are all there is to check, and
  // both are known before the body is read.
  app.addHook("onRequest", async (request, reply) => {
    const { token } = request.params as { token?: string };
    const tokenOk = sameSecret(token, options.webhookToken);
    const ipOk = allowed ? allowed(request.ip) : true;
    if (tokenOk && ipOk) return;
    request.log.warn(
      { path: request.routeOptions.url, reason: tokenOk ? "address not allowed" : "wrong token" },
      "africastalking webhook refused",
    );
    return reply.code(403).send({ detail: "Forbidden", request_id: request.id });
  });

  // Any other path or method under the secret prefix: the token must stay out of its log lines too.
  for (const path of [`${AT_PATH_PREFIX}/:token`, `${AT_PATH_PREFIX}/:token/*`])
    app.all(path, { logSerializers: HIDE_TOKEN, schema: { hide: true } }, (request, reply) =>
      reply.code(404).send({ detail: "Not found", request_id: request.id }),
    );

  app.post(
    `${AT_PATH_PREFIX}/:token/sms`,
    {
      logSerializers: HIDE_TOKEN,
      config: WEBHOOK_ROUTE_CONFIG,
      schema: { body: AfricasTalkingSms, hide: true },
      attachValidation: true,
    },
    async (request, reply) => {
      if (request.validationError)
        return ignoreMalformed(request, reply, AFRICAS_TALKING, smsOk, request.validationError.message);
      const message = parseAfricasTalkingSms(request.body);
      try {
        await options.enqueue(message);
      } catch (error) {
        // Africa's Talking never delivers an SMS callback again: whatever kept Redis from taking it (down, too
        // slow, a refused write during a failover), the message waits in the outbox rather than being lost.
        const reason = (error as Error).message;
        if (!options.outbox.keep(message, reason)) {
          request.log.error(
            { reason },
            "africastalking sms lost: Redis did not take it and the outbox is full",
          );
          return reply.code(503).send({ detail: "Temporarily unavailable", request_id: request.id });
        }
      }
      return smsOk(reply);
    },
  );

  app.post(
    `${AT_PATH_PREFIX}/:token/ussd`,
    {
      logSerializers: HIDE_TOKEN,
      config: WEBHOOK_ROUTE_CONFIG,
      schema: { body: AfricasTalkingUssd, hide: true },
      attachValidation: true,
    },
    async (request, reply) => {
      if (request.validationError) {
        const phone = readablePhone(request.body);
        const language = phone ? await callerLanguage(phone, options) : "en";
        const acknowledge = ussdOk(options.ussd, language);
        return ignoreMalformed(request, reply, AFRICAS_TALKING, acknowledge, request.validationError.message);
      }
      const { phoneNumber, text } = request.body;
      let screen: UssdScreen;
      try {
        screen = await options.gate(() =>
          ussdRespond({ phoneNumber, inputs: text === "" ? [] : text.split("*") }, options.ussd),
        );
      } catch (error) {
        // Whatever failed (Redis gone, or refusing a write in a failover), the caller gets a closing screen in
        // words: an HTTP error shows on the phone as a network fault. The saved language is in Redis too: the
        // phone number's country decides, else English.
        const language = languageFromPhone(phoneNumber) ?? "en";
        if (error instanceof ChannelsUnavailableError)
          request.log.warn({ reason: error.message, language }, "ussd answered busy: Redis is unavailable");
        else request.log.error({ err: error, language }, "ussd answered busy: the menu failed");
        screen = ussdScreens(options.ussd.texts, language).message("busy");
      }
      return reply.type("text/plain; charset=utf-8").send(ussdText(screen));
    },
  );
};
