import { readFileSync } from "node:fs";
import path from "node:path";
import fastifyCookie from "@fastify/cookie";
import fastifyCsrf from "@fastify/csrf-protection";
import fastifyFormbody from "@fastify/formbody";
import fastifySession from "@fastify/session";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import type { Redis } from "ioredis";
import type { Config } from "../config.js";
import type { Diagnoser } from "../diagnosis/diagnoser.js";
import type { Knowledge } from "../diagnosis/kb.js";
import { SESSION_IDLE_SECONDS } from "../limits.js";
import type { Records } from "../results/records.js";
import type { StaffStore } from "../staff/accounts.js";
import {
  CONSOLE_PREFIX,
  NEXT_MAX_CHARS,
  type PageContext,
  pageLanguage,
  sendPage,
  takeFlash,
} from "./context.js";
import { PageError, refusalKey } from "./page-error.js";
import authRoutes from "./routes/auth.js";
import caseRoutes from "./routes/cases.js";
import diagnoseRoutes from "./routes/diagnose.js";
import outbreakRoutes from "./routes/outbreaks.js";
import reviewRoutes from "./routes/review.js";
import { withLineFeeds } from "./schema.js";
import { sessionSecret } from "./session-secret.js";
import { createSessionStore } from "./session-store.js";
import { createConsoleTexts } from "./texts.js";
import { ErrorPage } from "./views/error.js";

export interface ConsoleDeps {
  config: Pick<Config, "sessionSecret" | "consoleTimeZone">;
  redis?: Redis;
  /** Redis key prefix of sessions and sign-in counters (tests use their own). Not `prefix`: Fastify's route prefix. */
  keyPrefix?: string;
  records: Records;
  staff: StaffStore;
  diagnoser: Diagnoser;
  knowledge: Knowledge;
  /** Queues an officer's answer to the farmer (present when channels run). */
  enqueueAnswer?: (requestId: string, owner?: string) => Promise<void>;
  /**
   * Queues the deletion of everything about a farmer in their chain of channel jobs (present when channels
   * run): the worker also deletes their language and waiting replies, and no job of theirs runs after it.
   */
  enqueueForget?: (owner: string) => Promise<void>;
}

declare module "fastify" {
  interface FastifyInstance {
    /** The page context of a console request: texts, language, staff member, CSRF token, flash message. */
    pageContext(request: FastifyRequest, reply: FastifyReply): Promise<PageContext>;
  }
}

export const SESSION_COOKIE = "cd_console";
const ASSETS_DIR = path.join(import.meta.dirname, "assets");
const ASSETS: Record<string, string> = {
  "console.css": "text/css; charset=utf-8",
  "console.js": "application/javascript; charset=utf-8",
  "icon.svg": "image/svg+xml",
};

/**
 * Sessions, CSRF protection and staff identity, for the console and for the results API (a signed-in staff
 * member may read any result). Sessions live in Redis when the service has one.
 */
async function staffSessions(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  await app.register(fastifyCookie);
  await app.register(fastifySession, {
    secret: deps.config.sessionSecret ?? (await sessionSecret(deps.redis, deps.keyPrefix)),
    cookieName: SESSION_COOKIE,
    cookie: {
      path: "/",
      httpOnly: true,
      sameSite: "lax",
      secure: "auto",
      maxAge: SESSION_IDLE_SECONDS * 1000,
    },
    saveUninitialized: false,
    rolling: true,
    store: createSessionStore(deps.redis, deps.keyPrefix),
  });
  await app.register(fastifyCsrf, {
    sessionPlugin: "@fastify/session",
    getToken: (request) => (request.body as { _csrf?: string } | undefined)?._csrf,
  });
  app.decorateRequest("staff", null);
  // A disabled account, or one whose password changed since, ends the session at its next request.
  app.addHook("onRequest", async (request) => {
    const username = request.session.staff;
    if (!username) return;
    const account = await deps.staff.get(username);
    if (account && !account.disabled && account.version === request.session.staffVersion) {
      request.staff = account;
      return;
    }
    request.session.staff = undefined;
    request.session.staffVersion = undefined;
  });
}

export const staffSessionsPlugin = fp(staffSessions, { name: "staff-sessions", fastify: "5.x" });

/**
 * The console page a form was posted from (its Referer), when it is one of ours; a page that is itself a form's
 * answer sets its own (`here` in its route).
 */
function formPage(request: FastifyRequest): string | undefined {
  try {
    const { host, pathname, search } = new URL(request.headers.referer ?? "");
    const page = `${pathname}${search}`;
    return host === request.host && pathname.startsWith(`${CONSOLE_PREFIX}/`) && page.length <= NEXT_MAX_CHARS
      ? page
      : undefined;
  } catch {
    return undefined;
  }
}

/** The console at /console: every page but sign-in is for signed-in staff only. */
export async function consolePlugin(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const texts = createConsoleTexts();
  await app.register(fastifyFormbody);
  // A call centre reaches the console from one address: the API's per-IP budget (a page is its HTML, its
  // assets and a thumbnail per case) would throttle its staff together. Pages need a session instead, and
  // sign-in keeps a limit of its own (and its own count of failures). Forms (POST) are counted: a refused one
  // answers with a page whose form starts a session, and a handful a minute is all staff send.
  app.addHook("onRoute", (route) => {
    if (route.config?.rateLimit !== undefined) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    route.config = { ...route.config, rateLimit: methods.includes("POST") ? "other" : false };
  });

  app.addHook("preValidation", async (request) => {
    request.body = withLineFeeds(request.body);
  });

  app.decorate("pageContext", async (request: FastifyRequest, reply: FastifyReply): Promise<PageContext> => {
    const lang = pageLanguage(request);
    const flashMessage = takeFlash(request);
    return {
      t: texts(lang),
      lang,
      staff: request.staff,
      csrf: reply.generateCsrf(),
      path: request.url.split("?")[0] ?? CONSOLE_PREFIX,
      here:
        request.method === "GET" && request.url.length <= NEXT_MAX_CHARS
          ? request.url
          : (formPage(request) ?? CONSOLE_PREFIX),
      ...(flashMessage ? { flash: flashMessage } : {}),
      ...(request.staff ? { queueCount: await deps.records.reviews.count() } : {}),
      timeZone: deps.config.consoleTimeZone,
      className: (classId) => {
        try {
          return deps.knowledge.name(classId, lang);
        } catch {
          return classId;
        }
      },
    };
  });

  app.setErrorHandler(async (error: Error & { statusCode?: number; code?: string }, request, reply) => {
    const status =
      error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, "console request failed");
    else request.log.info({ statusCode: status, code: error.code }, "console request refused");
    const ctx = await app.pageContext(request, reply);
    const message = error.code?.startsWith("FST_CSRF")
      ? ctx.t("csrf_failed")
      : status === 500
        ? ""
        : error instanceof PageError
          ? ctx.t(error.key, error.params)
          : ctx.t(refusalKey(status));
    return sendPage(
      reply,
      ErrorPage({ ctx, status, message }),
      status === 500 ? 500 : error.code?.startsWith("FST_CSRF") ? 403 : status,
    );
  });

  for (const [name, type] of Object.entries(ASSETS)) {
    const body = readFileSync(path.join(ASSETS_DIR, name));
    app.get(`${CONSOLE_PREFIX}/assets/${name}`, { schema: { hide: true } }, async (_request, reply) =>
      reply
        .type(type)
        .header("Cache-Control", "public, max-age=3600")
        .header("X-Content-Type-Options", "nosniff")
        .send(body),
    );
  }

  await app.register(authRoutes, { ...deps, texts });
  // Everything below needs a signed-in staff member: pages send the browser to sign-in, anything else is 401.
  await app.register(async (signedIn) => {
    signedIn.addHook("onRequest", async (request, reply) => {
      if (request.staff) return;
      if (request.method === "GET" || request.method === "HEAD") {
        const next = encodeURIComponent(request.url);
        return reply.redirect(`${CONSOLE_PREFIX}/sign-in?next=${next}`, 303);
      }
      return reply.code(401).type("text/plain; charset=utf-8").send("Sign in first.");
    });
    await signedIn.register(diagnoseRoutes, deps);
    await signedIn.register(caseRoutes, deps);
    await signedIn.register(reviewRoutes, deps);
    await signedIn.register(outbreakRoutes, deps);
    // Any other console address: a page saying so, not the API's JSON.
    signedIn.get(`${CONSOLE_PREFIX}/*`, { schema: { hide: true } }, async (request, reply) => {
      const ctx = await app.pageContext(request, reply);
      return sendPage(reply, ErrorPage({ ctx, status: 404, message: ctx.t("errors.not_found") }), 404);
    });
  });
}
