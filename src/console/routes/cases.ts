import { type FastifyPluginAsyncTypebox, Type } from "@fastify/type-provider-typebox";
import { parsePhoneNumberFromString } from "libphonenumber-js";
import sharp from "sharp";
import { decodeImage } from "../../diagnosis/image/decode.js";
import { DETAIL_LEVELS, type DetailLevel } from "../../diagnosis/types.js";
import { RESULT_TTL_SECONDS } from "../../limits.js";
import { forgetFarmer } from "../../results/forget.js";
import type { StoredPhoto } from "../../results/photos.js";
import { normalizeShortCode } from "../../results/short-code.js";
import { CONSOLE_PREFIX, flash, sendPage } from "../context.js";
import { PageError } from "../page-error.js";
import type { ConsoleDeps } from "../plugin.js";
import { CsrfOnly, OneOf } from "../schema.js";
import { CasePage } from "../views/case.js";
import { LookupPage } from "../views/lookup.js";

/** A farmer as the stores key them: an E.164 number, or `tg:` and a Telegram chat id. */
export function ownerFromQuery(query: string): string | undefined {
  const text = query.trim();
  const chat = /^(?:tg:)?(-?\d{5,16})$/i.exec(text);
  if (/^tg:/i.test(text) && chat) return `tg:${chat[1]}`;
  const phone = parsePhoneNumberFromString(text.startsWith("+") ? text : `+${text.replace(/^00/, "")}`);
  return phone?.isValid() ? phone.number : undefined;
}

/** Photos the browser cannot show (HEIC) are shown as JPEG, converted when they are viewed. */
async function viewable(photo: StoredPhoto): Promise<StoredPhoto> {
  if (photo.type === "image/jpeg") return photo;
  const decoded = await decodeImage(photo.data);
  const data = await sharp(decoded.data, {
    raw: { width: decoded.width, height: decoded.height, channels: 3 },
  })
    .jpeg({ quality: 85 })
    .toBuffer();
  return { data, type: "image/jpeg" };
}

const caseRoutes: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, deps) => {
  const { records } = deps;

  app.get(
    `${CONSOLE_PREFIX}/cases/:code`,
    {
      schema: {
        hide: true,
        params: Type.Object({ code: Type.String({ maxLength: 16 }) }),
        querystring: Type.Object({ level: Type.Optional(OneOf(DETAIL_LEVELS)) }),
      },
    },
    async (request, reply) => {
      const code = normalizeShortCode(request.params.code);
      const stored = code ? await records.store.getByCode(code) : undefined;
      if (!stored) throw new PageError(404, "errors.no_result", { days: RESULT_TTL_SECONDS / 86_400 });
      const ctx = await app.pageContext(request, reply);
      const open = stored.review !== undefined && !stored.review.decision;
      const messages = stored.owner ? await records.sent.list(stored.owner) : undefined;
      const example = await records.examples.get(stored.result.request_id);
      const level: DetailLevel = request.query.level ?? "standard";
      const view = { stored, example, level, messages, open };
      return sendPage(reply, CasePage({ ctx, view, knowledge: deps.knowledge }));
    },
  );

  app.get(
    `${CONSOLE_PREFIX}/photos/:id`,
    { schema: { hide: true, params: Type.Object({ id: Type.String({ format: "uuid" }) }) } },
    async (request, reply) => {
      const photo =
        (await records.photos.get(request.params.id)) ?? (await records.examples.photo(request.params.id));
      if (!photo) throw new PageError(404, "errors.not_found");
      const shown = await viewable(photo);
      return (
        reply
          .type(shown.type)
          // A shared call-centre computer: the next person must not find farmers' photos in the cache.
          .header("Cache-Control", "no-store")
          .header("X-Content-Type-Options", "nosniff")
          .send(shown.data)
      );
    },
  );

  // Labelled examples are kept until deleted: here, by an administrator.
  app.post(
    `${CONSOLE_PREFIX}/examples/:id/delete`,
    {
      schema: { hide: true, params: Type.Object({ id: Type.String({ format: "uuid" }) }), body: CsrfOnly },
      preHandler: app.csrfProtection,
    },
    async (request, reply) => {
      if (request.staff?.role !== "admin") throw new PageError(403, "errors.admin_only");
      const example = await records.examples.get(request.params.id);
      if (!example || !(await records.examples.delete(request.params.id)))
        throw new PageError(404, "errors.not_found");
      request.log.info({ requestId: example.id, staff: request.staff.username }, "labelled example deleted");
      const ctx = await app.pageContext(request, reply);
      flash(request, "ok", ctx.t("case.example_deleted"));
      return reply.redirect(`${CONSOLE_PREFIX}/cases/${example.code}`, 303);
    },
  );

  // A farmer who asks the call centre to delete everything about them: an administrator does it from the look-up.
  app.post(
    `${CONSOLE_PREFIX}/lookup/forget`,
    {
      schema: {
        hide: true,
        body: Type.Object({
          _csrf: Type.Optional(Type.String()),
          who: Type.String({ maxLength: 40 }),
          asked: Type.Literal("yes"),
        }),
      },
      preHandler: app.csrfProtection,
    },
    async (request, reply) => {
      if (request.staff?.role !== "admin") throw new PageError(403, "errors.admin_only");
      const owner = ownerFromQuery(request.body.who);
      if (!owner) throw new PageError(404, "errors.not_found");
      const ctx = await app.pageContext(request, reply);
      const staff = request.staff.username;
      if (deps.enqueueForget) {
        await deps.enqueueForget(owner);
        request.log.info({ staff }, "farmer's data deletion queued at their request");
        flash(request, "ok", ctx.t("lookup.forget_queued", { who: owner }));
      } else {
        const forgotten = await forgetFarmer(records, owner);
        request.log.info({ staff, ...forgotten }, "farmer's data deleted at their request");
        flash(request, "ok", ctx.t("lookup.forgotten", { ...forgotten, who: owner }));
      }
      return reply.redirect(`${CONSOLE_PREFIX}/lookup`, 303);
    },
  );

  app.get(
    `${CONSOLE_PREFIX}/lookup`,
    {
      schema: { hide: true, querystring: Type.Object({ q: Type.Optional(Type.String({ maxLength: 40 })) }) },
    },
    async (request, reply) => {
      const query = (request.query.q ?? "").trim();
      const ctx = await app.pageContext(request, reply);
      if (!query) return sendPage(reply, LookupPage({ ctx, query }));
      const code = normalizeShortCode(query);
      if (code && (await records.store.getByCode(code)))
        return reply.redirect(`${CONSOLE_PREFIX}/cases/${code}`, 303);
      const owner = ownerFromQuery(query);
      if (!owner) return sendPage(reply, LookupPage({ ctx, query, notFound: true }), 404);
      const [results, messages] = await Promise.all([records.store.listFor(owner), records.sent.list(owner)]);
      if (results.length === 0 && messages.length === 0)
        return sendPage(reply, LookupPage({ ctx, query, notFound: true }), 404);
      request.log.info({ staff: request.staff?.username }, "farmer looked up");
      return sendPage(reply, LookupPage({ ctx, query, farmer: { who: owner, results, messages } }));
    },
  );
};

export default caseRoutes;
