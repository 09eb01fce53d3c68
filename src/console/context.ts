import type { FastifyReply, FastifyRequest } from "fastify";
import type { JSX } from "hono/jsx/jsx-runtime";
import type { Language } from "../diagnosis/types.js";
import type { StaffAccount } from "../staff/accounts.js";
import { languageFromAcceptLanguage, type T } from "./texts.js";

declare module "fastify" {
  interface Session {
    /** The signed-in staff member's user name, and the account version it was signed in under. */
    staff?: string;
    staffVersion?: number;
    lang?: Language;
    flash?: { kind: "ok" | "error"; text: string };
  }
  interface FastifyRequest {
    /** The signed-in staff member; null for everyone else (set by the console's session hook). */
    staff: StaffAccount | null;
  }
}

/** What every console page knows about the request it answers. */
export interface PageContext {
  t: T;
  lang: Language;
  staff: StaffAccount | null;
  csrf: string;
  /** This page's path, for the navigation. */
  path: string;
  /**
   * Where the language switch comes back to: this page with its query; for a page a form's POST answered (a
   * refusal), the page the form was on.
   */
  here: string;
  flash?: { kind: "ok" | "error"; text: string };
  queueCount?: number;
  /** Any class's name in the page's language. */
  className: (classId: string) => string;
  /** Where the console's staff work (CONSOLE_TIME_ZONE): times are shown there, with its name. */
  timeZone: string;
}

export const CONSOLE_PREFIX = "/console";
/** The longest address a sign-in or the language switch comes back to. */
export const NEXT_MAX_CHARS = 2000;

// Pages show farmers' phone numbers and photos: nothing is cached, framed, or loaded from elsewhere.
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; form-action 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'; connect-src 'self'";

export function pageLanguage(request: FastifyRequest): Language {
  return request.session.lang ?? languageFromAcceptLanguage(request.headers["accept-language"]);
}

export async function sendPage(reply: FastifyReply, page: JSX.Element, status = 200): Promise<FastifyReply> {
  return reply
    .code(status)
    .header("Content-Security-Policy", CSP)
    .header("Cache-Control", "no-store")
    .header("X-Frame-Options", "DENY")
    .header("Referrer-Policy", "same-origin")
    .header("X-Content-Type-Options", "nosniff")
    .type("text/html; charset=utf-8")
    .send(`<!doctype html>${(await page).toString()}`);
}

/** Shows a message on the next page (after a redirect). */
export function flash(request: FastifyRequest, kind: "ok" | "error", text: string): void {
  request.session.flash = { kind, text };
}

export function takeFlash(request: FastifyRequest): PageContext["flash"] {
  const message = request.session.flash;
  if (message) request.session.flash = undefined;
  return message;
}
