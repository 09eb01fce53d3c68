import { type FastifyPluginAsyncTypebox, Type } from "@fastify/type-provider-typebox";
import { CLASS_IDS } from "../../diagnosis/knowledge/entries.js";
import { ANSWER_MAX_CHARS, CLAIM_SECONDS, SETTLE_RETRY_MS, SETTLE_WITHIN_MINUTES } from "../../limits.js";
import { DECISIONS, type Decision } from "../../results/types.js";
import { type AnswerDeps, answerCase, settleAnswers } from "../../review/answer.js";
import { CONSOLE_PREFIX, flash, sendPage } from "../context.js";
import type { ConsoleDeps } from "../plugin.js";
import { CsrfOnly, OneOf } from "../schema.js";
import { languageName } from "../views/format.js";
import { AnswerPage, ReviewQueuePage } from "../views/review.js";
import { cropNames } from "./diagnose.js";

const Params = Type.Object({ id: Type.String({ format: "uuid" }) });
const AnswerBody = Type.Object({
  _csrf: Type.Optional(Type.String()),
  kind: Type.Optional(OneOf(DECISIONS)),
  class_id: Type.Optional(Type.String({ maxLength: 80 })),
  diagnosis: Type.Optional(Type.String({ maxLength: ANSWER_MAX_CHARS.diagnosis })),
  advice: Type.Optional(Type.String({ maxLength: ANSWER_MAX_CHARS.advice })),
});

const reviewRoutes: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, deps) => {
  const { records } = deps;
  const queuePage = `${CONSOLE_PREFIX}/review`;
  const answering = (logger: AnswerDeps["logger"]): AnswerDeps => ({
    records,
    isHealthy: (classId) => deps.knowledge.isHealthy(classId),
    ...(deps.enqueueAnswer ? { enqueueAnswer: deps.enqueueAnswer } : {}),
    ...(logger ? { logger } : {}),
  });

  // Answers whose follow-up failed part-way (answer.ts) are finished here, by whichever API process gets to them.
  let settling: NodeJS.Timeout | undefined;
  app.addHook("onReady", async () => {
    settling = setInterval(() => {
      settleAnswers(answering(app.log)).catch((error: unknown) =>
        app.log.warn({ err: error }, "officer's answers: could not list those to finish"),
      );
    }, SETTLE_RETRY_MS);
    settling.unref();
  });
  app.addHook("onClose", async () => clearInterval(settling));

  app.get(queuePage, { schema: { hide: true } }, async (request, reply) => {
    const ctx = await app.pageContext(request, reply);
    return sendPage(reply, ReviewQueuePage({ ctx, cases: await records.reviews.list() }));
  });

  app.post(
    `${queuePage}/:id/claim`,
    { schema: { hide: true, params: Params, body: CsrfOnly }, preHandler: app.csrfProtection },
    async (request, reply) => {
      const officer = request.staff!.username;
      const claim = await records.reviews.claim(request.params.id, officer);
      if (claim.ok) return reply.redirect(`${queuePage}/${request.params.id}`, 303);
      const ctx = await app.pageContext(request, reply);
      flash(request, "error", claim.by ? ctx.t("review.taken", { name: claim.by }) : ctx.t("review.closed"));
      return reply.redirect(queuePage, 303);
    },
  );

  // Opening the case renews the officer's claim (also one that lapsed while nobody took the case): one who keeps
  // it open keeps it. Taking a case is the queue's Answer button (a POST): a link from elsewhere takes nothing.
  app.get(`${queuePage}/:id`, { schema: { hide: true, params: Params } }, async (request, reply) => {
    const officer = request.staff!.username;
    const ctx = await app.pageContext(request, reply);
    const claim = await records.reviews.renew(request.params.id, officer);
    if (!claim.ok && !claim.by && (await records.reviews.isOpen(request.params.id))) {
      flash(request, "error", ctx.t("review.take_first"));
      return reply.redirect(queuePage, 303);
    }
    const stored = await records.store.get(request.params.id);
    if (!claim.ok || !stored) {
      flash(
        request,
        "error",
        claim.ok || !claim.by ? ctx.t("review.closed") : ctx.t("review.taken", { name: claim.by }),
      );
      return reply.redirect(queuePage, 303);
    }
    const heldUntil = new Date(Date.now() + CLAIM_SECONDS * 1000);
    const view = { stored, heldUntil, classes: CLASS_IDS, cropNames: cropNames(ctx.t) };
    return sendPage(reply, AnswerPage({ ctx, view }));
  });

  app.post(
    `${queuePage}/:id/release`,
    { schema: { hide: true, params: Params, body: CsrfOnly }, preHandler: app.csrfProtection },
    async (request, reply) => {
      await records.reviews.release(request.params.id, request.staff!.username);
      return reply.redirect(queuePage, 303);
    },
  );

  app.post(
    `${queuePage}/:id/answer`,
    { schema: { hide: true, params: Params, body: AnswerBody }, preHandler: app.csrfProtection },
    async (request, reply) => {
      const { id } = request.params;
      const body = request.body;
      const officer = request.staff!.username;
      const ctx = await app.pageContext(request, reply);
      const stored = await records.store.get(id);
      if (!stored) {
        flash(request, "error", ctx.t("review.closed"));
        return reply.redirect(queuePage, 303);
      }
      // The page shown again says the case is still theirs: so it is, renewed as opening it would.
      const problem = async (text: string) => {
        const claim = await records.reviews.claim(id, officer);
        if (!claim.ok) {
          flash(
            request,
            "error",
            claim.by ? ctx.t("review.taken", { name: claim.by }) : ctx.t("review.closed"),
          );
          return reply.redirect(queuePage, 303);
        }
        const { _csrf: _, ...sent } = body;
        const view = {
          stored,
          heldUntil: new Date(Date.now() + CLAIM_SECONDS * 1000),
          classes: CLASS_IDS,
          cropNames: cropNames(ctx.t),
          error: text,
          sent,
        };
        // The language switch comes back to the case, not to this form's address.
        return sendPage(reply, AnswerPage({ ctx: { ...ctx, here: `${queuePage}/${id}` }, view }), 422);
      };
      const kind =
        body.kind ?? (body.class_id ? "corrected" : body.diagnosis || body.advice ? "answered" : undefined);
      const at = new Date().toISOString();
      let decision: Decision;
      if (kind === "confirmed") {
        const best = stored.result.diagnoses[0] ?? stored.result.candidates[0];
        if (!best) return problem(ctx.t("review.missing_class"));
        decision = { kind, classId: best.id, officer, at };
      } else if (kind === "corrected") {
        if (!body.class_id || !CLASS_IDS.includes(body.class_id))
          return problem(ctx.t("review.missing_class"));
        const best = stored.result.diagnoses[0] ?? stored.result.candidates[0];
        decision = {
          kind: best?.id === body.class_id ? "confirmed" : "corrected",
          classId: body.class_id,
          officer,
          at,
        };
      } else {
        const diagnosis = body.diagnosis?.trim();
        const advice = body.advice?.trim();
        if (!diagnosis || !advice) return problem(ctx.t("review.missing_text"));
        decision = { kind: "answered", diagnosis, advice, officer, at };
      }
      const outcome = await answerCase(answering(request.log), id, decision);
      if (outcome.status === "settling") {
        flash(request, "ok", ctx.t("review.settling", { minutes: SETTLE_WITHIN_MINUTES }));
        return reply.redirect(queuePage, 303);
      }
      if (outcome.status !== "done") {
        // Not theirs to answer: someone else holds it now, it was answered (or expired), or they gave it back.
        const by = outcome.status === "not_claimed" ? await records.reviews.holder(id) : undefined;
        const open = outcome.status === "not_claimed" && (await records.reviews.isOpen(id));
        const why = by
          ? ctx.t("review.taken", { name: by })
          : open
            ? ctx.t("review.expired")
            : ctx.t("review.closed");
        // Words the officer wrote are not lost with the refusal: the queue page shows them back to copy.
        const written =
          decision.kind === "answered" ? `${decision.diagnosis}: ${decision.advice}` : undefined;
        flash(request, "error", written ? `${why} ${ctx.t("review.your_text", { text: written })}` : why);
        return reply.redirect(queuePage, 303);
      }
      const said = outcome.sent
        ? ctx.t("review.sent", {
            channel: ctx.t(`source.${stored.source ?? "api"}`),
            language: languageName(stored.language),
          })
        : ctx.t("review.saved");
      const keptNote = decision.classId ? ` ${ctx.t(outcome.kept ? "review.kept" : "review.not_kept")}` : "";
      flash(request, "ok", `${said}${keptNote}`);
      return reply.redirect(queuePage, 303);
    },
  );
};

export default reviewRoutes;
