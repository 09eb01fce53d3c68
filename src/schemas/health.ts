import { Type } from "@sinclair/typebox";
import { StringEnum } from "./helpers.js";

export const HealthResponse = Type.Object(
  {
    status: StringEnum(["healthy", "degraded"], {
      description: "`healthy` when every configured dependency is ready; `degraded` (still 200) otherwise",
    }),
    version: Type.String({ description: "Version of the running service", examples: ["0.1.0"] }),
    checks: Type.Record(Type.String(), StringEnum(["ok", "not_ready"]), {
      description: "Readiness of each configured dependency: `model` always, `redis` when REDIS_URL is set",
      examples: [{ model: "ok", redis: "ok" }],
    }),
  },
  { $id: "HealthResponse", description: "Service status" },
);
