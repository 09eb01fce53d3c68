import type { Child } from "hono/jsx";
import { LANGUAGES } from "../../diagnosis/types.js";
import { CONSOLE_PREFIX, type PageContext } from "../context.js";
import { languageName } from "./format.js";

const NAV = [
  ["diagnose", `${CONSOLE_PREFIX}/diagnose`],
  ["lookup", `${CONSOLE_PREFIX}/lookup`],
  ["review", `${CONSOLE_PREFIX}/review`],
  ["outbreaks", `${CONSOLE_PREFIX}/outbreaks`],
] as const;

/** A select's options, the current one selected. */
export function Options<T extends string>({
  values,
  selected,
  label,
}: {
  values: readonly T[];
  selected: string | undefined;
  label: (value: T) => string;
}) {
  return (
    <>
      {values.map((value) => (
        <option value={value} selected={value === selected}>
          {label(value)}
        </option>
      ))}
    </>
  );
}

/** A select that applies itself when changed (console.js), with a button for browsers without scripts. */
export function AutoSubmit({ children }: { children: Child }) {
  return (
    <>
      {children}
      <noscript>
        <button type="submit">OK</button>
      </noscript>
    </>
  );
}

export function CsrfField({ ctx }: { ctx: PageContext }) {
  return <input type="hidden" name="_csrf" value={ctx.csrf} />;
}

export function Layout({ ctx, title, children }: { ctx: PageContext; title: string; children: Child }) {
  const { t } = ctx;
  return (
    <html lang={ctx.lang}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content="light" />
        <title>{`${title} · ${t("app")}`}</title>
        <link rel="icon" href={`${CONSOLE_PREFIX}/assets/icon.svg`} type="image/svg+xml" />
        <link rel="stylesheet" href={`${CONSOLE_PREFIX}/assets/console.css`} />
        <script src={`${CONSOLE_PREFIX}/assets/console.js`} defer />
      </head>
      <body>
        <header class="top">
          <a class="brand" href={`${CONSOLE_PREFIX}/`}>
            <img src={`${CONSOLE_PREFIX}/assets/icon.svg`} alt="" width={28} height={28} />
            <span>
              {t("app")} <small>{t("console")}</small>
            </span>
          </a>
          {ctx.staff && (
            <nav class="nav" aria-label={t("console")}>
              {NAV.map(([key, href]) => (
                <a href={href} aria-current={ctx.path.startsWith(href) ? "page" : undefined}>
                  {t(`nav.${key}`)}
                  {key === "review" && ctx.queueCount ? <span class="badge">{ctx.queueCount}</span> : null}
                </a>
              ))}
            </nav>
          )}
          <div class="account">
            <form method="post" action={`${CONSOLE_PREFIX}/language`} class="lang">
              <CsrfField ctx={ctx} />
              <input type="hidden" name="next" value={ctx.here} />
              <AutoSubmit>
                <label>
                  <span class="sr">{t("language")}</span>
                  <select name="lang" data-autosubmit aria-label={t("language")}>
                    <Options values={LANGUAGES} selected={ctx.lang} label={languageName} />
                  </select>
                </label>
              </AutoSubmit>
            </form>
            {ctx.staff && (
              <form method="post" action={`${CONSOLE_PREFIX}/sign-out`} class="signout">
                <CsrfField ctx={ctx} />
                <span class="who" title={t(`role.${ctx.staff.role}`)}>
                  {ctx.staff.name}
                </span>
                <button type="submit" class="link">
                  {t("sign_out")}
                </button>
              </form>
            )}
          </div>
        </header>
        <main class="main">
          {ctx.flash && (
            <p class={`flash ${ctx.flash.kind}`} role={ctx.flash.kind === "error" ? "alert" : "status"}>
              {ctx.flash.text}
            </p>
          )}
          {children}
        </main>
      </body>
    </html>
  );
}
