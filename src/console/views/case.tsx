import type { Knowledge } from "../../diagnosis/kb.js";
import { DETAIL_LEVELS, type DetailLevel } from "../../diagnosis/types.js";
import type { SentMessage } from "../../results/sent-log.js";
import type { StoredResult } from "../../results/types.js";
import type { LabelledExample } from "../../review/examples.js";
import { CONSOLE_PREFIX, type PageContext } from "../context.js";
import { formatWhen } from "./format.js";
import { AutoSubmit, CsrfField, Layout, Options } from "./layout.js";
import { headline, Messages } from "./lookup.js";
import { Candidates, Facts, OutcomeBadge, Photo, TreatmentPanel } from "./result.js";

export interface CaseView {
  stored: StoredResult;
  /** The photo's labelled example, when one is kept. */
  example: LabelledExample | undefined;
  level: DetailLevel;
  messages: SentMessage[] | undefined;
  open: boolean;
}

/**
 * The class the page explains: the officer's once they answered (none for an answer in their own words: the
 * model's reading, which they set aside, must not be read out as the treatment), else the model's diagnosis.
 */
function shownClass(stored: StoredResult): string | undefined {
  const decision = stored.review?.decision;
  return decision ? decision.classId : stored.result.diagnoses[0]?.id;
}

export function ReviewStatus({
  stored,
  ctx,
  open,
}: {
  stored: StoredResult;
  ctx: PageContext;
  open: boolean;
}) {
  const { t } = ctx;
  const review = stored.review;
  const decision = review?.decision;
  if (!review) return <p class="status ok">{t("case.review_not_needed")}</p>;
  return (
    <div class={`status ${decision ? "ok" : "waiting"}`}>
      <p>
        {review.reasons.map((r) => (
          <span class={`reason ${r}`}>{t(`reason.${r}`)}</span>
        ))}{" "}
        {decision
          ? t("case.review_answered", { officer: decision.officer, when: formatWhen(decision.at, ctx) })
          : t("case.review_waiting")}
      </p>
      {decision && (decision.diagnosis || decision.advice) && (
        <blockquote dir="auto">
          <strong>{decision.diagnosis}</strong>
          <p>{decision.advice}</p>
        </blockquote>
      )}
      {!decision && open && (
        <form method="post" action={`${CONSOLE_PREFIX}/review/${stored.result.request_id}/claim`}>
          <CsrfField ctx={ctx} />
          <button type="submit" class="primary">
            {t("case.answer_open")}
          </button>
        </form>
      )}
    </div>
  );
}

/** A kept photo, and for administrators the way to delete it (the farmer asked, or it is wrong). */
function KeptExample({ example, ctx }: { example: LabelledExample; ctx: PageContext }) {
  return (
    <div class="status ok">
      <p>
        {ctx.t("case.kept", {
          label: ctx.className(example.label),
          when: formatWhen(example.decidedAt, ctx),
        })}
      </p>
      {ctx.staff?.role === "admin" && (
        <form method="post" action={`${CONSOLE_PREFIX}/examples/${example.id}/delete`}>
          <CsrfField ctx={ctx} />
          <button type="submit">{ctx.t("case.delete_example")}</button>
        </form>
      )}
    </div>
  );
}

export function CasePage({
  ctx,
  view,
  knowledge,
}: {
  ctx: PageContext;
  view: CaseView;
  knowledge: Knowledge;
}) {
  const { t } = ctx;
  const { stored, level } = view;
  const { result } = stored;
  const classId = shownClass(stored);
  const top = result.diagnoses[0];
  const decided = stored.review?.decision !== undefined;
  return (
    <Layout ctx={ctx} title={t("case.title", { code: stored.code })}>
      <div class="case">
        <div class="case-photo">
          <Photo stored={stored} ctx={ctx} />
        </div>
        <div class="case-body">
          <p class="code-line">
            <span class="muted">{t("case.tell_farmer")}</span>
            <strong class="code" data-code>
              {stored.code}
            </strong>
          </p>
          <h1>
            <OutcomeBadge result={result} ctx={ctx} />{" "}
            {decided
              ? headline(stored, ctx)
              : top
                ? `${ctx.className(top.id)} · ${t("case.confidence", { value: Math.round(top.confidence * 100) })}`
                : ""}
          </h1>
          {result.image_analysis.quality_issue && (
            <p class="flash error">{t(`quality.${result.image_analysis.quality_issue}`)}</p>
          )}
          {result.additional_notes && <p class="note">{result.additional_notes}</p>}
          <ReviewStatus stored={stored} ctx={ctx} open={view.open} />
          {view.example && <KeptExample example={view.example} ctx={ctx} />}
          <h2>{t("case.candidates")}</h2>
          <Candidates result={result} ctx={ctx} />
          <Facts stored={stored} ctx={ctx} showLanguage />
        </div>
      </div>
      {classId && (
        <section class="card">
          <div class="row between">
            <h2>{t("case.treatment")}</h2>
            <form method="get" class="inline">
              <AutoSubmit>
                <label>
                  {t("case.show_level")}{" "}
                  <select name="level" data-autosubmit>
                    <Options
                      values={DETAIL_LEVELS}
                      selected={level}
                      label={(l) => t(`diagnose.levels.${l}`)}
                    />
                  </select>
                </label>
              </AutoSubmit>
            </form>
          </div>
          <TreatmentPanel classId={classId} level={level} ctx={ctx} knowledge={knowledge} />
        </section>
      )}
      {view.messages && (
        <section class="card">
          <h2>{t("case.messages")}</h2>
          <Messages messages={view.messages} ctx={ctx} />
        </section>
      )}
    </Layout>
  );
}
