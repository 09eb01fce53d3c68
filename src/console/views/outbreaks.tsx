import { OUTBREAK_WEEKS, SURGE_FACTOR, SURGE_MIN_COUNT } from "../../limits.js";
import type { OutbreakReport } from "../../outbreaks/report.js";
import { CONSOLE_PREFIX, type PageContext } from "../context.js";
import { regionName } from "./format.js";
import { Layout } from "./layout.js";

// Tableau 10's first eight: told apart easily, also by most colour-blind readers.
const COLOURS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#9c755f"];
const W = 720;
const H = 260;
const PAD = { left: 44, right: 24, top: 14, bottom: 36 };

/** About six week labels, the last always, none crowding it. */
function showLabel(i: number, n: number): boolean {
  const every = Math.ceil(n / 6);
  return i === n - 1 || (i % every === 0 && n - 1 - i >= every / 2);
}

/** A line per disease over the weeks shown, drawn on the server (no script, no chart library download). */
function Chart({ report, ctx }: { report: OutbreakReport; ctx: PageContext }) {
  const lines = report.series.slice(0, COLOURS.length);
  const max = Math.max(1, ...lines.flatMap((s) => s.counts));
  const step = Math.max(1, Math.ceil(max / 4));
  const top = step * 4;
  const n = report.weeks.length;
  const x = (i: number) => PAD.left + (n <= 1 ? 0 : (i * (W - PAD.left - PAD.right)) / (n - 1));
  const y = (v: number) => PAD.top + (H - PAD.top - PAD.bottom) * (1 - v / top);
  const fmt = new Intl.DateTimeFormat(ctx.lang, { day: "numeric", month: "short" });
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={ctx.t("outbreaks.chart")}>
        {[0, 1, 2, 3, 4].map((i) => (
          <g class="grid">
            <line x1={PAD.left} x2={W - PAD.right} y1={y(i * step)} y2={y(i * step)} />
            <text x={PAD.left - 6} y={y(i * step) + 4} text-anchor="end">
              {i * step}
            </text>
          </g>
        ))}
        {report.weeks.map((w, i) =>
          showLabel(i, n) ? (
            <text
              class={i === 0 || i === n - 1 ? "axis" : "axis minor"}
              x={x(i)}
              y={H - 8}
              text-anchor={i === n - 1 ? "end" : i === 0 ? "start" : "middle"}
            >
              {fmt.format(w.start)}
            </text>
          ) : null,
        )}
        {lines.map((s, k) => (
          <g>
            <polyline
              fill="none"
              stroke={COLOURS[k]}
              stroke-width="2.5"
              points={s.counts.map((v, i) => `${x(i)},${y(v)}`).join(" ")}
            />
            {s.counts.map((v, i) => (v > 0 ? <circle cx={x(i)} cy={y(v)} r="3" fill={COLOURS[k]} /> : null))}
          </g>
        ))}
      </svg>
      <figcaption class="legend">
        {lines.map((s, k) => (
          <span>
            <svg viewBox="0 0 10 10" aria-hidden="true">
              <rect width="10" height="10" rx="2" fill={COLOURS[k]} />
            </svg>
            {ctx.className(s.disease)}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}

/**
 * The choices of a filter with the one the page shows among them: an address may ask for any region or number
 * of weeks, and the form must not show another choice than the one applied (and apply it on "Show").
 */
function withCurrent<T extends string | number>(choices: readonly T[], current: T): T[] {
  if (current === "" || choices.includes(current)) return [...choices];
  return [...choices, current].sort((a, b) =>
    typeof a === "number" && typeof b === "number" ? a - b : String(a).localeCompare(String(b)),
  );
}

export function OutbreaksPage({
  ctx,
  report,
  region,
  weeks,
}: {
  ctx: PageContext;
  report: OutbreakReport;
  region: string;
  weeks: number;
}) {
  const { t } = ctx;
  const fmt = new Intl.DateTimeFormat(ctx.lang, { day: "numeric", month: "short" });
  // The weeks before this one, newest first, next to this week's count.
  const earlier = report.weeks.slice(-6, -1).reverse();
  return (
    <Layout ctx={ctx} title={t("outbreaks.title")}>
      <h1>{t("outbreaks.title")}</h1>
      <p class="muted lead">{t("outbreaks.intro")}</p>
      <form method="get" action={`${CONSOLE_PREFIX}/outbreaks`} class="card filters">
        <label>
          {t("outbreaks.region")}
          <select name="region">
            <option value="">{t("outbreaks.all_regions")}</option>
            {withCurrent(report.regions, region).map((r) => (
              <option value={r} selected={r === region}>
                {regionName(r, ctx)}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t("outbreaks.weeks")}
          <select name="weeks">
            {withCurrent([4, 8, OUTBREAK_WEEKS, 26], weeks).map((w) => (
              <option value={w} selected={w === weeks}>
                {w}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">{t("outbreaks.show")}</button>
      </form>
      {report.rows.length === 0 ? (
        <p class="card empty">{t("outbreaks.none")}</p>
      ) : (
        <>
          <section class="card">
            <h2>{t("outbreaks.chart")}</h2>
            <Chart report={report} ctx={ctx} />
          </section>
          <section class="card">
            <h2>{t("outbreaks.table")}</h2>
            <p class="muted small">
              {t("outbreaks.surge_rule", { factor: SURGE_FACTOR, min: SURGE_MIN_COUNT })}
            </p>
            <div class="scroll">
              <table class="counts">
                {/* This week and the flag come first: on a phone they are what shows without scrolling. */}
                <thead>
                  <tr>
                    <th>{t("outbreaks.disease")}</th>
                    <th>{t("outbreaks.region")}</th>
                    <th class="num">{t("outbreaks.this_week")}</th>
                    <th>{t("outbreaks.surge")}</th>
                    <th class="num">{t("outbreaks.mean")}</th>
                    {earlier.map((w) => (
                      <th class="num" title={t("outbreaks.week_of", { date: fmt.format(w.start) })}>
                        {fmt.format(w.start)}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {report.rows.map((row) => (
                    <tr class={row.surge ? "surge" : undefined}>
                      <td>{ctx.className(row.disease)}</td>
                      <td>{regionName(row.region, ctx)}</td>
                      <td class="num now">
                        {row.surge && <span class="surge-mark">▲ </span>}
                        {row.thisWeek}
                      </td>
                      <td>{row.surge ? <span class="pill bad">▲ {t("outbreaks.surge")}</span> : ""}</td>
                      <td class="num">{row.baseline.toFixed(1)}</td>
                      {row.counts
                        .slice(-1 - earlier.length, -1)
                        .reverse()
                        .map((n) => (
                          <td class="num">{n}</td>
                        ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </section>
        </>
      )}
    </Layout>
  );
}
