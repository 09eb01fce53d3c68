import type { Knowledge } from "../../diagnosis/kb.js";
import { CROPS, type DetailLevel, type DiagnosisResult } from "../../diagnosis/types.js";
import type { StoredResult } from "../../results/types.js";
import { CONSOLE_PREFIX, type PageContext } from "../context.js";
import { formatWhen, languageName, regionName } from "./format.js";

/** The photo with the model's boxes drawn over it, in the photo's own proportions. */
export function Photo({ stored, ctx, small }: { stored: StoredResult; ctx: PageContext; small?: boolean }) {
  const id = stored.result.request_id;
  if (!stored.photo)
    return <div class={small ? "photo small missing" : "photo missing"}>{ctx.t("case.no_photo")}</div>;
  const boxes = small ? [] : (stored.result.detections ?? []);
  return (
    <figure class={small ? "photo small" : "photo"}>
      <div class="frame">
        <img
          src={`${CONSOLE_PREFIX}/photos/${id}`}
          alt={ctx.t("case.title", { code: stored.code })}
          loading="lazy"
          data-missing={ctx.t("case.no_photo")}
        />
        {boxes.length > 0 && (
          <svg viewBox="0 0 100 100" preserveAspectRatio="none" aria-hidden="true">
            {boxes.map((d) => (
              <rect
                x={d.bbox[0] * 100}
                y={d.bbox[1] * 100}
                width={d.bbox[2] * 100}
                height={d.bbox[3] * 100}
                vector-effect="non-scaling-stroke"
              />
            ))}
          </svg>
        )}
      </div>
      {boxes.length > 0 && <figcaption>{ctx.t("case.boxes")}</figcaption>}
    </figure>
  );
}

export function OutcomeBadge({ result, ctx }: { result: DiagnosisResult; ctx: PageContext }) {
  return <span class={`outcome ${result.outcome}`}>{ctx.t(`outcome.${result.outcome}`)}</span>;
}

/** The model's top three, named in the page's language (the result holds them in the farmer's). */
export function Candidates({ result, ctx }: { result: DiagnosisResult; ctx: PageContext }) {
  if (result.candidates.length === 0) return null;
  return (
    <ol class="candidates">
      {result.candidates.map((c) => (
        <li>
          <span class="name">{ctx.className(c.id)}</span>
          {/* An SVG bar: its width is an attribute, which the page's CSP (no inline styles) allows. */}
          <svg class="bar" viewBox="0 0 100 8" preserveAspectRatio="none" aria-hidden="true">
            <rect width="100" height="8" rx="4" class="track" />
            <rect width={Math.max(2, Math.round(c.confidence * 100))} height="8" rx="4" class="fill" />
          </svg>
          <span class="pct">{Math.round(c.confidence * 100)}%</span>
        </li>
      ))}
    </ol>
  );
}

const TREATMENT_PARTS = [
  "immediate_actions",
  "recommended_products",
  "natural_alternatives",
  "prevention",
] as const;

/** The treatment at the level asked for, from the knowledge base in the page's language. */
export function TreatmentPanel({
  classId,
  level,
  ctx,
  knowledge,
}: {
  classId: string;
  level: DetailLevel;
  ctx: PageContext;
  knowledge: Pick<Knowledge, "treatment" | "describe">;
}) {
  let described: ReturnType<Knowledge["describe"]>;
  let treatment: ReturnType<Knowledge["treatment"]>;
  try {
    described = knowledge.describe(classId, ctx.lang, level);
    treatment = knowledge.treatment([classId], ctx.lang, level);
  } catch {
    return null;
  }
  return (
    <section class="treatment">
      <h3>
        {described.name}{" "}
        <span class={`urgency ${described.urgency}`}>{ctx.t(`urgency.${described.urgency}`)}</span>
      </h3>
      <p class="muted">
        <i>{described.scientific_name}</i>
      </p>
      <p>{described.description}</p>
      {TREATMENT_PARTS.map((part) =>
        treatment[part].length ? (
          <div class="part">
            <h4>{ctx.t(`case.${part}`)}</h4>
            <ul>
              {treatment[part].map((item) => (
                <li>{item}</li>
              ))}
            </ul>
          </div>
        ) : null,
      )}
    </section>
  );
}

function cropLabel(crop: string | undefined, t: PageContext["t"]): string | undefined {
  return crop && (CROPS as readonly string[]).includes(crop) ? t(`crops.${crop}`) : crop;
}

/** The facts of a stored result: when, where from, region, crop, the farmer's words. */
export function Facts({
  stored,
  ctx,
  showLanguage,
}: {
  stored: StoredResult;
  ctx: PageContext;
  showLanguage?: boolean;
}) {
  const { t } = ctx;
  const rows: [string, string | undefined][] = [
    [t("case.via"), t(`source.${stored.source ?? "api"}`)],
    [t("case.from"), stored.owner],
    [t("case.region"), stored.regionText ?? regionName(stored.region, ctx)],
    [t("case.crop"), cropLabel(stored.crop ?? stored.result.image_analysis.detected_crop ?? undefined, t)],
    [t("case.note"), stored.note],
    [t("diagnose.farmer_language"), showLanguage ? languageName(stored.language) : undefined],
  ];
  return (
    <dl class="facts">
      <dt>{t("case.sent_at", { when: "" }).trim()}</dt>
      <dd>{formatWhen(stored.createdAt, ctx)}</dd>
      {rows
        .filter(([, v]) => v)
        .map(([k, v]) => (
          <>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </>
        ))}
    </dl>
  );
}
