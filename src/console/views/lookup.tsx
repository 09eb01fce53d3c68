import type { SentMessage } from "../../results/sent-log.js";
import type { StoredResult } from "../../results/types.js";
import { CONSOLE_PREFIX, type PageContext } from "../context.js";
import { formatWhen } from "./format.js";
import { CsrfField, Layout } from "./layout.js";
import { OutcomeBadge, Photo } from "./result.js";

/**
 * Sent, refused, or kept for the farmer's next message; a kept one whose text a newer entry sent (or the provider
 * refused when it went out) is no longer waiting.
 */
function stateOf(m: SentMessage, i: number, messages: SentMessage[]) {
  if (m.ok) return { item: "sent", pill: "ok", label: "lookup.sent" };
  const later = m.held
    ? messages.slice(0, i).find((newer) => !newer.held && newer.text === m.text)
    : undefined;
  if (m.held && !later) return { item: "held", pill: "wait", label: "lookup.held" };
  if (later?.ok) return { item: "sent", pill: "ok", label: "lookup.held_sent" };
  return { item: "failed", pill: "bad", label: "lookup.failed" };
}

export function Messages({ messages, ctx }: { messages: SentMessage[]; ctx: PageContext }) {
  const { t } = ctx;
  if (messages.length === 0) return <p class="muted">{t("lookup.no_messages")}</p>;
  return (
    <ul class="messages">
      {messages.map((m, i) => {
        const state = stateOf(m, i, messages);
        return (
          <li class={state.item}>
            <div class="meta">
              <span class={`pill ${state.pill}`}>{t(state.label)}</span>
              <span>{t(`source.${m.channel}`)}</span>
              <time datetime={m.at}>{formatWhen(m.at, ctx)}</time>
            </div>
            <p class="bubble">{m.text}</p>
            {m.error && <p class="error-text">{m.error}</p>}
          </li>
        );
      })}
    </ul>
  );
}

/** What a result amounts to now: the officer's answer when there is one, else the model's reading. */
export function headline(stored: StoredResult, ctx: PageContext): string {
  const decision = stored.review?.decision;
  if (decision?.classId) return ctx.className(decision.classId);
  if (decision?.diagnosis) return decision.diagnosis;
  return stored.result.diagnoses[0]?.name ?? stored.result.candidates[0]?.name ?? "";
}

export interface FarmerView {
  who: string;
  results: StoredResult[];
  messages: SentMessage[];
}

export function LookupPage({
  ctx,
  query,
  notFound,
  farmer,
}: {
  ctx: PageContext;
  query: string;
  notFound?: boolean;
  farmer?: FarmerView;
}) {
  const { t } = ctx;
  return (
    <Layout ctx={ctx} title={farmer ? t("lookup.farmer", { who: farmer.who }) : t("lookup.title")}>
      <h1>{t("lookup.title")}</h1>
      <form method="get" action={`${CONSOLE_PREFIX}/lookup`} class="card search">
        <label>
          {t("lookup.query")}
          <input
            name="q"
            value={query}
            required
            maxlength={40}
            autocapitalize="characters"
            placeholder="K7M4QX"
          />
          <small>{t("lookup.hint")}</small>
        </label>
        <button type="submit" class="primary">
          {t("lookup.submit")}
        </button>
      </form>
      {notFound && <p class="flash error">{t("lookup.not_found", { query })}</p>}
      {farmer && (
        <div class="farmer">
          <section class="card">
            <h2>{t("lookup.farmer", { who: farmer.who })}</h2>
            <h3>{t("lookup.results")}</h3>
            {farmer.results.length === 0 ? (
              <p class="muted">{t("lookup.no_results")}</p>
            ) : (
              <ul class="results">
                {farmer.results.map((s) => (
                  <li>
                    <a href={`${CONSOLE_PREFIX}/cases/${s.code}`} class="result-row">
                      <Photo stored={s} ctx={ctx} small />
                      <span class="what">
                        <OutcomeBadge result={s.result} ctx={ctx} />
                        <strong>{headline(s, ctx)}</strong>
                        <span class="muted">
                          {s.code} · {formatWhen(s.createdAt, ctx)} · {t(`source.${s.source ?? "api"}`)}
                        </span>
                        {s.review?.decision && (
                          <span class="pill ok">
                            {t("case.review_answered", {
                              officer: s.review.decision.officer,
                              when: formatWhen(s.review.decision.at, ctx),
                            })}
                          </span>
                        )}
                        {s.feedback && (
                          <span class={`pill ${s.feedback.helped ? "ok" : "bad"}`}>
                            {t("lookup.feedback")}:{" "}
                            {s.feedback.helped ? t("lookup.helped") : t("lookup.not_helped")}
                          </span>
                        )}
                      </span>
                    </a>
                  </li>
                ))}
              </ul>
            )}
          </section>
          <section class="card">
            <h3>{t("lookup.messages")}</h3>
            <Messages messages={farmer.messages} ctx={ctx} />
          </section>
          {ctx.staff?.role === "admin" && (
            <form method="post" action={`${CONSOLE_PREFIX}/lookup/forget`} class="card forget">
              <h3>{t("lookup.forget_title")}</h3>
              <p class="muted">{t("lookup.forget_what")}</p>
              <CsrfField ctx={ctx} />
              <input type="hidden" name="who" value={farmer.who} />
              <label class="check">
                <input type="checkbox" name="asked" value="yes" required />
                {t("lookup.forget_asked")}
              </label>
              <button type="submit" class="danger">
                {t("lookup.forget_submit")}
              </button>
            </form>
          )}
        </div>
      )}
    </Layout>
  );
}
