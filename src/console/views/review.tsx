import { cropOfClass } from "../../diagnosis/crops.js";
import { ANSWER_MAX_CHARS, CLAIM_SECONDS } from "../../limits.js";
import type { StoredResult } from "../../results/types.js";
import type { OpenCase } from "../../review/queue.js";
import { CONSOLE_PREFIX, type PageContext } from "../context.js";
import { formatAge, formatTime, languageName, regionName } from "./format.js";
import { CsrfField, Layout } from "./layout.js";
import { Candidates, Facts, Photo } from "./result.js";

function Reasons({ stored, ctx }: { stored: StoredResult; ctx: PageContext }) {
  return (
    <span class="reasons">
      {(stored.review?.reasons ?? []).map((r) => (
        <span class={`reason ${r}`}>{ctx.t(`reason.${r}`)}</span>
      ))}
    </span>
  );
}

export function ReviewQueuePage({ ctx, cases }: { ctx: PageContext; cases: OpenCase[] }) {
  const { t } = ctx;
  return (
    <Layout ctx={ctx} title={t("review.title")}>
      <div class="row between">
        <h1>{t("review.title")}</h1>
        {/* The whole queue's size: the page lists its oldest cases. */}
        <span class="pill">{t("review.count", { count: ctx.queueCount ?? cases.length })}</span>
      </div>
      <p class="muted lead">{t("review.intro", { minutes: Math.round(CLAIM_SECONDS / 60) })}</p>
      {cases.length === 0 ? (
        <p class="card empty">{t("review.empty")}</p>
      ) : (
        <ol class="queue">
          {cases.map(({ stored, claimedBy }) => (
            <li class="card case-card" data-code={stored.code}>
              <Photo stored={stored} ctx={ctx} small />
              <div class="case-head">
                <div class="row wrap">
                  <Reasons stored={stored} ctx={ctx} />
                  <span class="muted">
                    {t("review.waiting_for", {
                      age: formatAge(stored.review?.queuedAt ?? stored.createdAt, ctx),
                    })}
                  </span>
                </div>
                <p class="muted small">
                  {stored.code} · {t(`source.${stored.source ?? "api"}`)} ·{" "}
                  {stored.regionText ?? regionName(stored.region, ctx)} · {languageName(stored.language)}
                </p>
              </div>
              <div class="case-summary">
                <Candidates result={stored.result} ctx={ctx} />
                {stored.note && (
                  <p class="quote" dir="auto">
                    “{stored.note}”
                  </p>
                )}
              </div>
              <div class="case-action">
                {claimedBy && claimedBy !== ctx.staff?.username ? (
                  <span class="pill">{t("review.taken_by", { name: claimedBy })}</span>
                ) : (
                  <form method="post" action={`${CONSOLE_PREFIX}/review/${stored.result.request_id}/claim`}>
                    <CsrfField ctx={ctx} />
                    <button type="submit" class="primary">
                      {t("review.open")}
                    </button>
                  </form>
                )}
              </div>
            </li>
          ))}
        </ol>
      )}
    </Layout>
  );
}

export interface AnswerView {
  stored: StoredResult;
  heldUntil: Date;
  classes: readonly string[];
  cropNames: Record<string, string>;
  error?: string;
  /** What the officer sent, shown again with `error`: nothing they typed is lost to a refusal. */
  sent?: { kind?: string; class_id?: string; diagnosis?: string; advice?: string };
}

export function AnswerPage({ ctx, view }: { ctx: PageContext; view: AnswerView }) {
  const { t } = ctx;
  const { stored } = view;
  const id = stored.result.request_id;
  const best = stored.result.diagnoses[0] ?? stored.result.candidates[0];
  const sent = view.sent ?? {};
  const byCrop = new Map<string, string[]>();
  for (const c of view.classes) {
    const crop = cropOfClass(c) ?? "other";
    byCrop.set(crop, [...(byCrop.get(crop) ?? []), c]);
  }
  return (
    <Layout ctx={ctx} title={t("review.answer_title", { code: stored.code })}>
      <h1>{t("review.answer_title", { code: stored.code })}</h1>
      <p class="muted">
        {t("review.held_until", {
          time: formatTime(view.heldUntil, ctx),
        })}{" "}
        {t("review.farmer_language", { language: languageName(stored.language) })}
      </p>
      {view.error && (
        <p class="flash error" role="alert">
          {view.error}
        </p>
      )}
      <div class="case">
        <div class="case-photo">
          <Photo stored={stored} ctx={ctx} />
        </div>
        <div class="case-body">
          <p>
            <Reasons stored={stored} ctx={ctx} />
          </p>
          <h2>{t("case.candidates")}</h2>
          <Candidates result={stored.result} ctx={ctx} />
          <Facts stored={stored} ctx={ctx} />
        </div>
      </div>
      <form method="post" action={`${CONSOLE_PREFIX}/review/${id}/answer`} class="card stack answer">
        <CsrfField ctx={ctx} />
        {best && (
          <div class="choice">
            <label>
              <input type="radio" name="kind" value="confirmed" checked={sent.kind === "confirmed"} />
              <span>
                <strong>{t("review.confirm")}</strong>
                <small>{t("review.confirm_hint", { name: ctx.className(best.id) })}</small>
              </span>
            </label>
          </div>
        )}
        <div class="choice">
          <label>
            <input
              type="radio"
              name="kind"
              value="corrected"
              checked={sent.kind === "corrected" || (!best && sent.kind === undefined)}
            />
            <span>
              <strong>{t("review.correct")}</strong>
              <small>{t("review.correct_hint")}</small>
            </span>
          </label>
          <div class="more">
            <select name="class_id" aria-label={t("review.choose_class")}>
              <option value="">{t("review.choose_class")}</option>
              {[...byCrop].map(([crop, ids]) => (
                <optgroup label={view.cropNames[crop] ?? crop}>
                  {ids.map((c) => (
                    <option value={c} selected={sent.class_id === c}>
                      {ctx.className(c)}
                    </option>
                  ))}
                </optgroup>
              ))}
            </select>
          </div>
        </div>
        <div class="choice">
          <label>
            <input type="radio" name="kind" value="answered" checked={sent.kind === "answered"} />
            <span>
              <strong>{t("review.free")}</strong>
              <small>{t("review.free_hint")}</small>
            </span>
          </label>
          <div class="more stack">
            <label>
              {t("review.diagnosis")}
              <input name="diagnosis" maxlength={ANSWER_MAX_CHARS.diagnosis} value={sent.diagnosis} />
            </label>
            <label>
              {t("review.advice")}
              <textarea name="advice" rows={4} maxlength={ANSWER_MAX_CHARS.advice}>
                {sent.advice}
              </textarea>
            </label>
          </div>
        </div>
        <div class="row">
          <button type="submit" class="primary big">
            {t("review.send")}
          </button>
        </div>
      </form>
      <form method="post" action={`${CONSOLE_PREFIX}/review/${id}/release`} class="release">
        <CsrfField ctx={ctx} />
        <button type="submit" class="link">
          {t("review.release")}
        </button>
      </form>
    </Layout>
  );
}
