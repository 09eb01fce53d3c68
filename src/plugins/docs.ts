import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyPluginAsync } from "fastify";
import fp from "fastify-plugin";

export interface DocsOptions {
  version: string;
  /** Public URL of the service, when known; otherwise the docs call the host they were loaded from. */
  serverUrl: string | undefined;
}

/** The terms the API is offered under; the project publishes no open licence for it. */
const API_LICENSE = "Proprietary: use by agreement with the operator of this service";

const DESCRIPTION = `Diagnoses crop diseases from one photo of a plant and returns a treatment plan.

Send the photo as \`multipart/form-data\` to \`POST /diagnosis/\` (alias \`/diagnoses/\`). Only \`image\` is required.

**Access.** Without a key, requests are limited per client IP: 30/min on diagnosis, 100/min on health.
Enterprise clients send their key in \`X-API-Key\` (or \`Authorization: Bearer\`) and get their own limit,
up to 1000/min. A wrong key is rejected (401), never downgraded.

**Limits.** Fixed one-minute windows. Every response carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and
\`X-RateLimit-Reset\` (Unix time, seconds); a 429 also carries \`Retry-After\`: wait that long, then retry with
exponential backoff.

**Errors.** \`{"detail": "...", "request_id": "..."}\`; 422 lists \`{"loc", "msg", "type"}\` per invalid field.`;

// Swagger UI's default CSP allows any https font or style and the public validator: nothing here may
// leave the machine, so those are dropped (and no upgrade to https, which would break plain-http hosts).
// Swagger UI sets inline styles at run time, which style hashes cannot cover.
function selfOnlyCsp(header: string): string {
  return header
    .replace(/ https:/g, "")
    .replace(/ validator\.swagger\.io/g, "")
    .replace(/ upgrade-insecure-requests;/g, "")
    .replace(/style-src [^;]*;/, "style-src 'self' 'unsafe-inline';");
}

/**
 * Three OpenAPI 3.0 details the generator leaves to us: the form's `isFile` (an Ajv keyword) is a binary
 * string; a nullable enum must list `null` among its values or strict readers refuse null; and a header's
 * schema keeps JSON Schema's `examples` array, which 3.0 spells `example` (one value).
 */
function finishSchemas(node: unknown): void {
  if (Array.isArray(node)) node.forEach(finishSchemas);
  else if (node && typeof node === "object") {
    const schema = node as Record<string, unknown>;
    if (schema.isFile === true) {
      delete schema.isFile;
      Object.assign(schema, { type: "string", format: "binary" });
    }
    if (schema.nullable === true && Array.isArray(schema.enum) && !schema.enum.includes(null)) {
      schema.enum = [...schema.enum, null];
    }
    // A media type's `examples` is a map of named examples (valid 3.0); only the JSON Schema array is rewritten.
    if (Array.isArray(schema.examples)) {
      schema.example ??= schema.examples[0];
      delete schema.examples;
    }
    Object.values(schema).forEach(finishSchemas);
  }
}

const REDOC_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Crop Disease Diagnosis API - ReDoc</title>
  <link rel="icon" href="data:,">
  <style>body { margin: 0; padding: 0; }</style>
</head>
<body>
  <redoc spec-url="/openapi.json"></redoc>
  <script src="/redoc/redoc.standalone.js"></script>
</body>
</html>`;

const REDOC_CDN_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg";
const EMPTY_SVG = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E";

// ReDoc injects its styles and runs its search index in a blob worker; everything else is same-origin.
const REDOC_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; object-src 'none'; base-uri 'self'";

/** /openapi.json generated from the route schemas, Swagger UI at /docs, ReDoc at /redoc: all served locally. */
const docs: FastifyPluginAsync<DocsOptions> = async (app, opts) => {
  await app.register(swagger, {
    openapi: {
      openapi: "3.0.3",
      info: {
        title: "Crop Disease Diagnosis API",
        version: opts.version,
        description: DESCRIPTION,
        // The terms live with the operator's documentation of the service, which these docs pages are.
        license: { name: API_LICENSE, url: `${(opts.serverUrl ?? "").replace(/\/+$/, "")}/docs` },
      },
      servers: [{ url: opts.serverUrl ?? "/" }],
      tags: [
        { name: "diagnosis", description: "Diagnose a plant photo" },
        { name: "health", description: "Service status" },
        { name: "results", description: "Stored results and extension officers' answers (API key)" },
      ],
      components: {
        securitySchemes: {
          ApiKeyHeader: {
            type: "apiKey",
            in: "header",
            name: "X-API-Key",
            description: "Enterprise API key",
          },
          BearerAuth: { type: "http", scheme: "bearer", description: "The same API key, as a bearer token" },
        },
      },
      // `{}` first: a key is optional, anonymous clients are served on the per-IP limits.
      security: [{}, { ApiKeyHeader: [] }, { BearerAuth: [] }],
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transformObject: (documentObject) => {
      // A copy: the generated document may share objects with the route schemas Ajv compiled.
      const document = structuredClone(
        "openapiObject" in documentObject ? documentObject.openapiObject : documentObject.swaggerObject,
      );
      finishSchemas(document);
      return document;
    },
  });

  await app.register(swaggerUi, {
    routePrefix: "/docs",
    uiConfig: { deepLinking: true, validatorUrl: null, displayRequestDuration: true },
    staticCSP: true,
    transformStaticCSP: selfOnlyCsp,
  });

  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());

  const redocBundle = (
    await readFile(createRequire(import.meta.url).resolve("redoc/bundles/redoc.standalone.js"), "utf8")
  )
    // ReDoc's sidebar footer loads its logo from Redocly's CDN, unconditionally: point it at an empty image.
    .replace(REDOC_CDN_LOGO, EMPTY_SVG);
  app.get("/redoc", { schema: { hide: true } }, async (_request, reply) =>
    reply.header("Content-Security-Policy", REDOC_CSP).type("text/html; charset=utf-8").send(REDOC_HTML),
  );
  app.get("/redoc/redoc.standalone.js", { schema: { hide: true } }, async (_request, reply) =>
    reply
      .header("Cache-Control", "public, max-age=86400")
      .type("application/javascript; charset=utf-8")
      .send(redocBundle),
  );
};

export default fp(docs, { name: "docs", fastify: "5.x" });
