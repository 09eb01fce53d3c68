import { Type } from "@sinclair/typebox";
import { exampleHealth } from "./examples.js";
import { StringEnum } from "./helpers.js";

export const HealthResponse = Type.Object(
  {
    status: StringEnum(["healthy", "degraded"], {
      description: "`healthy` when every configured dependency is ready; `degraded` (still 200) otherwise",
      examples: [exampleHealth.status],
    }),
    version: Type.String({
      description: "Version of the running service",
      examples: [exampleHealth.version],
    }),
    checks: Type.Record(Type.String(), StringEnum(["ok", "not_ready"]), {
      description: "Readiness of each configured dependency: `model` always, `redis` when REDIS_URL is set",
      examples: [exampleHealth.checks],
    }),
  },
  { $id: "HealthResponse", description: "Service status", examples: [exampleHealth] },
);
