import { CROPS, DETAIL_LEVELS, LANGUAGES } from "../../diagnosis/types.js";
import { CONSOLE_PREFIX, type PageContext } from "../context.js";
import { languageName } from "./format.js";
import { CsrfField, Layout, Options } from "./layout.js";

/** What the form was sent with, shown again beside the refusal: only the photo has to be chosen again. */
export interface DiagnoseSent {
  crop_type?: string;
  region?: string;
  language?: string;
  detail_level?: string;
  phone?: string;
  description?: string;
  consent?: string;
}

export function DiagnosePage({
  ctx,
  cropNames,
  sent = {},
  error,
}: {
  ctx: PageContext;
  cropNames: Record<string, string>;
  sent?: DiagnoseSent;
  error?: string;
}) {
  const { t } = ctx;
  return (
    <Layout ctx={ctx} title={t("diagnose.title")}>
      <h1>{t("diagnose.title")}</h1>
      <p class="muted lead">{t("diagnose.intro")}</p>
      {error && (
        <p class="flash error" role="alert">
          {error}
        </p>
      )}
      <form
        method="post"
        action={`${CONSOLE_PREFIX}/diagnose`}
        enctype="multipart/form-data"
        class="card stack diagnose"
        data-working={t("diagnose.working")}
      >
        <CsrfField ctx={ctx} />
        <label class="drop">
          <span class="label">{t("diagnose.photo")}</span>
          <input type="file" name="image" accept="image/*,.heic,.heif" capture="environment" required />
          <img class="preview" alt="" hidden />
          <small>{t("diagnose.photo_hint")}</small>
        </label>
        <div class="grid2">
          <label>
            {t("diagnose.crop")}
            <select name="crop_type">
              <option value="">{t("diagnose.crop_auto")}</option>
              {CROPS.map((c) => (
                <option value={c} selected={sent.crop_type === c}>
                  {cropNames[c] ?? c}
                </option>
              ))}
            </select>
          </label>
          <label>
            {t("diagnose.region")}
            <input name="region" maxlength={100} placeholder="Kenya" value={sent.region} />
            <small>{t("diagnose.region_hint")}</small>
          </label>
          <label>
            {t("diagnose.farmer_language")}
            <select name="language">
              <Options values={LANGUAGES} selected={sent.language ?? ctx.lang} label={languageName} />
            </select>
          </label>
          <label>
            {t("diagnose.level")}
            <select name="detail_level">
              <Options
                values={DETAIL_LEVELS}
                selected={sent.detail_level ?? "simple"}
                label={(l) => t(`diagnose.levels.${l}`)}
              />
            </select>
          </label>
          <label>
            {t("diagnose.phone")}
            <input
              name="phone"
              type="tel"
              inputmode="tel"
              maxlength={20}
              placeholder="+254712345678"
              value={sent.phone}
            />
            <small>{t("diagnose.phone_hint")}</small>
          </label>
          <label>
            {t("diagnose.note")}
            <textarea name="description" rows={2} maxlength={2000}>
              {sent.description}
            </textarea>
          </label>
        </div>
        <label class="check">
          <input type="checkbox" name="consent" value="yes" checked={sent.consent === "yes"} />
          {t("diagnose.consent")}
        </label>
        <button type="submit" class="primary big">
          {t("diagnose.submit")}
        </button>
      </form>
    </Layout>
  );
}
