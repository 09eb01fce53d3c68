import { CONSOLE_PREFIX, type PageContext } from "../context.js";
import { Layout } from "./layout.js";

export function ErrorPage({ ctx, status, message }: { ctx: PageContext; status: number; message: string }) {
  return (
    <Layout ctx={ctx} title={String(status)}>
      <section class="card narrow">
        <h1>{status}</h1>
        {message && <p>{message}</p>}
        <p>
          <a href={`${CONSOLE_PREFIX}/`}>{ctx.t("app")}</a>
        </p>
      </section>
    </Layout>
  );
}
