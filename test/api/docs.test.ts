import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testApp } from "./support/app.js";

type App = Awaited<ReturnType<typeof testApp>>["app"];
// biome-ignore lint/suspicious/noExplicitAny: a parsed OpenAPI document is walked freely in assertions
type Json = any;

let app: App;
let doc: Json;
beforeAll(async () => {
  ({ app } = await testApp());
  const res = await app.inject("/openapi.json");
  expect(res.statusCode).toBe(200);
  expect(res.headers["content-type"]).toMatch(/^application\/json/);
  doc = res.json();
});
afterAll(() => app.close());

describe("/openapi.json", () => {
  it("is OpenAPI 3.0.x with info, version, servers, tags and security schemes", () => {
    expect(doc.openapi).toMatch(/^3\.0\.\d$/);
    expect(doc.info.title).toBeTruthy();
    expect(doc.info.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(doc.servers).toHaveLength(1);
    expect(doc.tags.map((t: Json) => t.name)).toEqual(["diagnosis", "health", "results"]);
    expect(doc.components.securitySchemes.ApiKeyHeader).toMatchObject({
      type: "apiKey",
      in: "header",
      name: "X-API-Key",
    });
    expect(doc.components.securitySchemes.BearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    expect(doc.security).toContainEqual({});
  });

  it("lists the spec's paths, and not the slash-less spellings or the docs routes", () => {
    expect(Object.keys(doc.paths).sort()).toEqual(["/diagnoses/", "/diagnosis/", "/health"]);
    expect(Object.keys(doc.paths["/diagnosis/"])).toEqual(["post"]);
  });

  it("documents all nine form fields with types, enums, defaults and limits", () => {
    const body = doc.paths["/diagnosis/"].post.requestBody;
    expect(body.required).toBe(true);
    const schema = body.content["multipart/form-data"].schema;
    expect(schema.required).toEqual(["image"]);
    const p = schema.properties;
    expect(Object.keys(p).sort()).toEqual(
      [
        "crop_type",
        "description",
        "detail_level",
        "growth_stage",
        "image",
        "include_bbox",
        "language",
        "region",
        "user_data",
      ].sort(),
    );
    expect(p.image).toMatchObject({ type: "string", format: "binary" });
    expect(p.image.isFile).toBeUndefined();
    expect(p.language).toMatchObject({
      type: "string",
      enum: ["en", "fr", "sw", "es", "pt", "it"],
      default: "fr",
    });
    expect(p.detail_level).toMatchObject({ enum: ["simple", "standard", "expert"], default: "standard" });
    expect(p.include_bbox).toMatchObject({ type: "boolean", default: false });
    expect(p.user_data).toMatchObject({ type: "string", maxLength: 4096 });
    for (const field of ["crop_type", "region", "growth_stage", "description"]) {
      expect(p[field].maxLength).toBeGreaterThan(0);
      expect(p[field].example).toBeTruthy();
    }
  });

  it("documents every response, with the rate limit and request id headers", () => {
    const responses = doc.paths["/diagnosis/"].post.responses;
    expect(Object.keys(responses).sort()).toEqual(["200", "400", "401", "422", "429", "500", "503"]);
    for (const response of Object.values(responses) as Json[]) {
      expect(Object.keys(response.headers)).toEqual(
        expect.arrayContaining([
          "X-Request-ID",
          "X-RateLimit-Limit",
          "X-RateLimit-Remaining",
          "X-RateLimit-Reset",
        ]),
      );
      expect(response.content["application/json"].schema.$ref).toMatch(/^#\/components\/schemas\/\w+$/);
    }
    expect(responses["429"].headers["Retry-After"]).toBeDefined();
    expect(responses["503"].headers["Retry-After"]).toBeDefined();
    expect(responses["503"].content["application/json"].schema.$ref).toBe(
      "#/components/schemas/ServiceUnavailableError",
    );
    expect(responses["200"].content["application/json"].schema.$ref).toBe(
      "#/components/schemas/DiagnosisResult",
    );
    expect(doc.paths["/health"].get.responses["200"].content["application/json"].schema.$ref).toBe(
      "#/components/schemas/HealthResponse",
    );
  });

  it("describes the result in both layouts, with the design's enums, nullables and examples", () => {
    const result = doc.components.schemas.DiagnosisResult;
    expect(result.properties.image_analysis.properties.is_plant.type).toBe("boolean");
    expect(result.properties.is_plant.type).toBe("boolean");
    expect(result.properties.crop_health.enum).toEqual(["healthy", "unhealthy", "unknown"]);
    expect(result.properties.treatment.properties.urgency).toMatchObject({
      enum: ["low", "moderate", "high", "critical", null],
      nullable: true,
    });
    expect(result.properties.detections).toMatchObject({ type: "array", nullable: true });
    const diagnosis = result.properties.diagnoses.items.properties;
    expect(diagnosis.category.enum).toContain("fungal");
    expect(diagnosis.eppo_code.example).toBe("PHYTIN");
    expect(JSON.stringify(doc)).not.toContain('"type":"null"');
  });

  it("describes the error bodies: detail + request_id, and the 422 list", () => {
    const s = doc.components.schemas;
    for (const name of ["BadRequestError", "UnauthorizedError", "RateLimitError", "InternalError"]) {
      expect(s[name].required).toEqual(["detail", "request_id"]);
      expect(s[name].properties.detail.example).toBeTruthy();
    }
    expect(s.ValidationError.properties.detail.items.required).toEqual(["loc", "msg", "type"]);
  });

  it("gives every field of the request, result, health and error bodies an example", () => {
    const missing: string[] = [];
    let fields = 0;
    const walk = (node: Json, path: string): void => {
      if (!node || typeof node !== "object") return;
      if (node.properties && typeof node.properties === "object") {
        for (const [name, property] of Object.entries(node.properties) as [string, Json][]) {
          fields++;
          // A file part has bytes, not a value to show; Swagger UI renders it as a file picker.
          if (property.format === "binary") continue;
          if (!("example" in property)) missing.push(`${path}.${name}`);
        }
      }
      for (const [key, value] of Object.entries(node)) walk(value, `${path}.${key}`);
    };
    walk(doc.components.schemas, "components.schemas");
    walk(doc.paths, "paths");
    expect(missing).toEqual([]);
    // Request form (9) + result (9 + nested) + health (3) + errors: a walk that found few fields proves nothing.
    expect(fields).toBeGreaterThan(60);
    expect(JSON.stringify(doc)).not.toContain('"examples":[');
  });

  it("gives every response a complete example body and an example for each header", () => {
    let responses = 0;
    for (const [path, operations] of Object.entries(doc.paths) as [string, Json][]) {
      for (const [method, operation] of Object.entries(operations) as [string, Json][]) {
        for (const [status, response] of Object.entries(operation.responses) as [string, Json][]) {
          responses++;
          const where = `${method.toUpperCase()} ${path} ${status}`;
          const media = response.content["application/json"];
          const name = media.schema.$ref.split("/").at(-1);
          const schema = doc.components.schemas[name];
          expect(media.example, where).toBeDefined();
          expect(Object.keys(media.example).sort(), where).toEqual(Object.keys(schema.properties).sort());
          for (const [header, spec] of Object.entries(response.headers) as [string, Json][]) {
            expect(spec.schema.example, `${where} ${header}`).toBeDefined();
          }
        }
      }
    }
    expect(responses).toBeGreaterThanOrEqual(11);
    const ok = doc.paths["/diagnosis/"].post.responses["200"].content["application/json"].example;
    expect(ok.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(ok.image_analysis.is_plant).toBe(ok.is_plant);
    expect(ok.diagnoses[0].eppo_code).toBe("PHYTIN");
  });

  it("gives operation ids and summaries", () => {
    expect(doc.paths["/diagnosis/"].post.operationId).toBe("createDiagnosis");
    expect(doc.paths["/diagnoses/"].post.operationId).toBe("createDiagnosisAlias");
    expect(doc.paths["/health"].get.operationId).toBe("getHealth");
  });
});

describe("/docs and /redoc", () => {
  it("serves Swagger UI with a same-origin CSP", async () => {
    const res = await app.inject("/docs/");
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/text\/html/);
    const csp = String(res.headers["content-security-policy"]);
    expect(csp).toContain("default-src 'self'");
    expect(csp).not.toMatch(/https:|validator\.swagger\.io|upgrade-insecure-requests/);
    const init = await app.inject("/docs/static/swagger-initializer.js");
    expect(init.body).toContain("validatorUrl: null");
  });

  it("serves ReDoc with the locally served bundle and no CDN", async () => {
    const res = await app.inject("/redoc");
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/text\/html/);
    expect(res.body).toContain('<script src="/redoc/redoc.standalone.js">');
    expect(res.body).toContain('spec-url="/openapi.json"');
    expect(res.body).not.toMatch(/https?:\/\//);
    expect(res.headers["content-security-policy"]).toContain("default-src 'self'");
    const bundle = await app.inject("/redoc/redoc.standalone.js");
    expect(bundle.statusCode).toBe(200);
    expect(bundle.headers["content-type"]).toMatch(/javascript/);
    expect(bundle.rawPayload.length).toBeGreaterThan(500_000);
    expect(bundle.body).not.toContain("cdn.redoc.ly");
  });
});
