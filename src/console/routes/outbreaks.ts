import { type FastifyPluginAsyncTypebox, Type } from "@fastify/type-provider-typebox";
import { OUTBREAK_WEEKS } from "../../limits.js";
import { outbreakReport } from "../../outbreaks/report.js";
import { CONSOLE_PREFIX, sendPage } from "../context.js";
import type { ConsoleDeps } from "../plugin.js";
import { OutbreaksPage } from "../views/outbreaks.js";

const outbreakRoutes: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, deps) => {
  app.get(
    `${CONSOLE_PREFIX}/outbreaks`,
    {
      schema: {
        hide: true,
        querystring: Type.Object({
          region: Type.Optional(Type.String({ maxLength: 100 })),
          weeks: Type.Optional(Type.Integer({ minimum: 2, maximum: 52, default: OUTBREAK_WEEKS })),
        }),
      },
    },
    async (request, reply) => {
      const weeks = request.query.weeks ?? OUTBREAK_WEEKS;
      const region = request.query.region || undefined;
      const report = await outbreakReport(deps.records.outbreaks, {
        now: new Date(),
        weeks,
        ...(region ? { region } : {}),
      });
      const ctx = await app.pageContext(request, reply);
      return sendPage(reply, OutbreaksPage({ ctx, report, region: region ?? "", weeks }));
    },
  );
};

export default outbreakRoutes;
