import { type FastifyPluginAsyncTypebox, Type } from "@fastify/type-provider-typebox";
import { parsePhoneNumberFromString } from "libphonenumber-js";
import { ImageError } from "../../diagnosis/diagnoser.js";
import { MAX_IMAGE_BYTES } from "../../diagnosis/image/limits.js";
import { CROPS, DETAIL_LEVELS, LANGUAGES } from "../../diagnosis/types.js";
import { ApiError } from "../../http-errors.js";
import { readForm } from "../../plugins/multipart.js";
import type { UploadedFile } from "../../schemas/file.js";
import { TEXT_LIMITS } from "../../schemas/request.js";
import { CONSOLE_PREFIX, sendPage } from "../context.js";
import { PageError } from "../page-error.js";
import type { ConsoleDeps } from "../plugin.js";
import { OneOf, withLineFeeds } from "../schema.js";
import type { T } from "../texts.js";
import { DiagnosePage } from "../views/diagnose.js";

const DiagnoseForm = Type.Object({
  _csrf: Type.Optional(Type.String()),
  image: Type.Optional(Type.Unsafe<UploadedFile>({ isFile: true })),
  crop_type: Type.Optional(Type.String({ maxLength: TEXT_LIMITS.crop_type })),
  region: Type.Optional(Type.String({ maxLength: TEXT_LIMITS.region })),
  language: OneOf(LANGUAGES),
  detail_level: OneOf(DETAIL_LEVELS),
  phone: Type.Optional(Type.String({ maxLength: 32 })),
  description: Type.Optional(Type.String({ maxLength: TEXT_LIMITS.description })),
  consent: Type.Optional(Type.Literal("yes")),
});

/** The names of the crops in the page's language. */
export function cropNames(t: T): Record<string, string> {
  return Object.fromEntries([...CROPS, "other"].map((crop) => [crop, t(`crops.${crop}`)]));
}

const diagnoseRoutes: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, deps) => {
  app.get(`${CONSOLE_PREFIX}/diagnose`, { schema: { hide: true } }, async (request, reply) => {
    const ctx = await app.pageContext(request, reply);
    return sendPage(reply, DiagnosePage({ ctx, cropNames: cropNames(ctx.t) }));
  });

  app.post(
    `${CONSOLE_PREFIX}/diagnose`,
    {
      schema: { hide: true, body: DiagnoseForm },
      // Read here so that the route's schema validates the multipart form like any other body.
      preValidation: async (request) => {
        try {
          request.body = withLineFeeds(await readForm(request)) as typeof request.body;
        } catch (error) {
          if (error instanceof ApiError && error.code === "FST_REQ_FILE_TOO_LARGE")
            throw new PageError(400, "diagnose.too_large", { mb: MAX_IMAGE_BYTES / 1024 / 1024 });
          throw error;
        }
      },
      // After the form is read: the token travels in the multipart body like every other field.
      preHandler: app.csrfProtection,
    },
    async (request, reply) => {
      const form = request.body;
      const ctx = await app.pageContext(request, reply);
      // The form again with what was typed (a file input cannot be refilled: only the photo is chosen again).
      const again = (text: string) => {
        const { image: _, _csrf: __, ...sent } = form;
        const page = {
          ctx: { ...ctx, here: `${CONSOLE_PREFIX}/diagnose` },
          cropNames: cropNames(ctx.t),
          sent,
          error: text,
        };
        return sendPage(reply, DiagnosePage(page), 422);
      };
      if (!form.image || form.image.data.length === 0) return again(ctx.t("diagnose.no_photo"));
      let owner: string | undefined;
      if (form.phone?.trim()) {
        const phone = parsePhoneNumberFromString(form.phone.trim());
        if (!phone?.isValid()) return again(ctx.t("diagnose.bad_phone"));
        owner = phone.number;
      }
      const context = {
        cropType: form.crop_type || undefined,
        region: form.region?.trim() || undefined,
        description: form.description?.trim() || undefined,
        language: form.language,
        detailLevel: form.detail_level,
        includeBbox: true,
      };
      let result: Awaited<ReturnType<typeof deps.diagnoser.diagnose>>;
      try {
        result = await deps.diagnoser.diagnose(form.image.data, context, request.id);
      } catch (error) {
        if (error instanceof ImageError) return again(ctx.t("errors.photo", { detail: error.message }));
        throw error;
      }
      const staff = request.staff!;
      const stored = await deps.records.record(
        { ...result, request_id: request.id },
        {
          language: form.language,
          photo: form.image.data,
          source: "console",
          staff: staff.username,
          ...(owner ? { owner } : {}),
          ...(context.region ? { region: context.region } : {}),
          ...(context.description ? { note: context.description } : {}),
          ...(context.cropType ? { crop: context.cropType } : {}),
          ...(form.consent
            ? { consent: { basis: "staff_recorded" as const, at: new Date().toISOString() } }
            : {}),
        },
      );
      request.log.info({ requestId: request.id, outcome: result.outcome }, "console diagnosis");
      return reply.redirect(`${CONSOLE_PREFIX}/cases/${stored.code}?level=${form.detail_level}`, 303);
    },
  );
};

export default diagnoseRoutes;
