import { CONSOLE_PREFIX, type PageContext } from "../context.js";
import { CsrfField, Layout } from "./layout.js";

export function SignInPage({ ctx, next, error }: { ctx: PageContext; next: string; error?: string }) {
  const { t } = ctx;
  return (
    <Layout ctx={ctx} title={t("sign_in.title")}>
      <section class="card narrow">
        <h1>{t("sign_in.title")}</h1>
        <p class="muted">{t("sign_in.intro")}</p>
        {error && (
          <p class="flash error" role="alert">
            {error}
          </p>
        )}
        <form method="post" action={`${CONSOLE_PREFIX}/sign-in`} class="stack">
          <CsrfField ctx={ctx} />
          <input type="hidden" name="next" value={next} />
          <label>
            {t("sign_in.username")}
            <input name="username" autocomplete="username" autocapitalize="none" required maxlength={32} />
          </label>
          <label>
            {t("sign_in.password")}
            <input name="password" type="password" autocomplete="current-password" required maxlength={256} />
          </label>
          <button type="submit" class="primary">
            {t("sign_in.submit")}
          </button>
        </form>
      </section>
    </Layout>
  );
}
