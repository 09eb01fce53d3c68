import { type FastifyPluginAsyncTypebox, Type } from "@fastify/type-provider-typebox";
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
} from "rate-limiter-flexible";
import { LANGUAGES, type Language } from "../../diagnosis/types.js";
import { SIGN_IN_ATTEMPTS, SIGN_IN_REFUND_MARGIN_MS, SIGN_IN_WINDOW_SECONDS } from "../../limits.js";
import { checkPassword } from "../../staff/passwords.js";
import { CONSOLE_PREFIX, NEXT_MAX_CHARS, sendPage } from "../context.js";
import type { ConsoleDeps } from "../plugin.js";
import { CsrfOnly, OneOf } from "../schema.js";
import type { T } from "../texts.js";
import { SignInPage } from "../views/sign-in.js";

/** Only paths inside the console: a `next` elsewhere would make sign-in an open redirect. */
export function safeNext(next: string | undefined): string {
  return next && /^\/console(\/[^\\]*)?$/.test(next) && !next.startsWith("//") ? next : `${CONSOLE_PREFIX}/`;
}

const SignInBody = Type.Object({
  _csrf: Type.Optional(Type.String()),
  username: Type.String({ maxLength: 64 }),
  password: Type.String({ maxLength: 256 }),
  next: Type.Optional(Type.String({ maxLength: NEXT_MAX_CHARS })),
});

const authRoutes: FastifyPluginAsyncTypebox<ConsoleDeps & { texts: (l: Language) => T }> = async (
  app,
  deps,
) => {
  // Failed sign-ins are counted per address and per user name (Redis when shared): guessing is slowed
  // whichever one an attacker varies. Each attempt is charged before its password is checked and refunded if
  // it succeeds, so that attempts sent side by side cannot all pass the check before any failure is counted. A
  // success does not reset the earlier failures: the window simply runs out.
  const limiter = (points: number, name: string): RateLimiterAbstract => {
    const common = {
      points,
      duration: SIGN_IN_WINDOW_SECONDS,
      keyPrefix: `${deps.keyPrefix ?? "cd:"}signin-${name}`,
    };
    return deps.redis
      ? new RateLimiterRedis({
          ...common,
          storeClient: deps.redis,
          insuranceLimiter: new RateLimiterMemory(common),
        })
      : new RateLimiterMemory(common);
  };
  // Guesses at one account are counted per address, so nobody can lock an officer out from elsewhere by
  // typing their user name; the per-name ceiling, well above it, still bounds guessing spread over addresses.
  const perIp = limiter(SIGN_IN_ATTEMPTS.perIp, "ip");
  const perIpUser = limiter(SIGN_IN_ATTEMPTS.perIpUser, "ip-user");
  const perUser = limiter(SIGN_IN_ATTEMPTS.perUser, "user");

  app.get(`${CONSOLE_PREFIX}`, { schema: { hide: true } }, async (_request, reply) =>
    reply.redirect(`${CONSOLE_PREFIX}/`, 301),
  );
  app.get(`${CONSOLE_PREFIX}/`, { schema: { hide: true } }, async (request, reply) =>
    reply.redirect(request.staff ? `${CONSOLE_PREFIX}/review` : `${CONSOLE_PREFIX}/sign-in`, 303),
  );

  app.get(
    `${CONSOLE_PREFIX}/sign-in`,
    {
      // Each visit without a session starts one (the form's CSRF secret): counted like the API's other pages.
      config: { rateLimit: "other" },
      schema: {
        hide: true,
        querystring: Type.Object({ next: Type.Optional(Type.String({ maxLength: NEXT_MAX_CHARS })) }),
      },
    },
    async (request, reply) => {
      if (request.staff) return reply.redirect(safeNext(request.query.next), 303);
      const ctx = await app.pageContext(request, reply);
      return sendPage(reply, SignInPage({ ctx, next: safeNext(request.query.next) }));
    },
  );

  app.post(
    `${CONSOLE_PREFIX}/sign-in`,
    {
      config: { rateLimit: "other" },
      schema: { hide: true, body: SignInBody },
      preHandler: app.csrfProtection,
    },
    async (request, reply) => {
      const username = request.body.username.trim().toLowerCase();
      const next = safeNext(request.body.next);
      const counters = [
        [perIp, request.ip],
        [perIpUser, `${request.ip} ${username}`],
        [perUser, username],
      ] as const;
      const charged = await Promise.allSettled(counters.map(([limiter, key]) => limiter.consume(key)));
      // A refund into a window that has ended since would open the next one below zero: a window about to end
      // keeps its charge (it is forgotten with it anyway).
      const refund = () =>
        Promise.all(
          counters.map(([limiter, key], i) => {
            const c = charged[i]!;
            const res = c.status === "fulfilled" ? c.value : c.reason;
            const ending = !(res instanceof RateLimiterRes) || res.msBeforeNext < SIGN_IN_REFUND_MARGIN_MS;
            return ending ? undefined : limiter.reward(key);
          }),
        );
      const over = charged.flatMap((c) => (c.status === "rejected" ? [c.reason] : []))[0];
      // A refused consume still counted: an attempt refused unchecked costs nothing, as it tried nothing.
      if (over !== undefined) await refund();
      if (over !== undefined && !(over instanceof RateLimiterRes)) throw over;
      const ctx = await app.pageContext(request, reply);
      if (over) {
        request.log.warn("sign-in refused: too many failed attempts");
        const minutes = Math.max(1, Math.ceil(over.msBeforeNext / 60_000));
        return sendPage(reply, SignInPage({ ctx, next, error: ctx.t("sign_in.too_many", { minutes }) }), 429);
      }
      const account = await deps.staff.get(username);
      const ok =
        (await checkPassword(account?.passwordHash, request.body.password)) && account && !account.disabled;
      if (!ok || !account) {
        // What was typed as a user name may be a password typed in the wrong field: named only if it is one.
        request.log.info(account ? { username } : { unknownUser: true }, "sign-in failed");
        return sendPage(reply, SignInPage({ ctx, next, error: ctx.t("sign_in.failed") }), 401);
      }
      await refund();
      // A fresh session id on sign-in: an id planted before it (session fixation) is worth nothing after.
      const lang = request.session.get("lang");
      await request.session.regenerate();
      request.session.staff = account.username;
      request.session.staffVersion = account.version;
      if (lang) request.session.lang = lang;
      request.log.info({ username }, "signed in");
      return reply.redirect(next, 303);
    },
  );

  app.post(
    `${CONSOLE_PREFIX}/sign-out`,
    { schema: { hide: true, body: CsrfOnly }, preHandler: app.csrfProtection },
    async (request, reply) => {
      const username = request.session.staff;
      await request.session.destroy();
      request.log.info({ username }, "signed out");
      return reply.redirect(`${CONSOLE_PREFIX}/sign-in`, 303);
    },
  );

  app.post(
    `${CONSOLE_PREFIX}/language`,
    {
      schema: {
        hide: true,
        body: Type.Object({
          _csrf: Type.Optional(Type.String()),
          lang: OneOf(LANGUAGES),
          next: Type.Optional(Type.String({ maxLength: NEXT_MAX_CHARS })),
        }),
      },
      preHandler: app.csrfProtection,
    },
    async (request, reply) => {
      request.session.lang = request.body.lang;
      return reply.redirect(safeNext(request.body.next), 303);
    },
  );
};

export default authRoutes;
