// The diagnosis core (src/diagnosis/) imports nothing from HTTP or the channels (GUIDE.md), also not through
// a module it imports: every relative import is followed from each core file, and no file reached may lie
// under channels/ or the HTTP layer, nor import fastify, a provider's SDK or a bot framework.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROOT_DIR } from "../../src/config.js";

const CORE = path.join(ROOT_DIR, "src/diagnosis");
const FORBIDDEN_DIRS = ["channels", "src/routes", "src/plugins", "src/console"].map((d) =>
  path.join(ROOT_DIR, d),
);
const FORBIDDEN_FILES = ["src/app.ts", "src/server.ts"].map((f) => path.join(ROOT_DIR, f));
const FORBIDDEN_PACKAGES = /^(fastify|@fastify\/|fastify-plugin|telegraf|twilio|africastalking|bullmq)/;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name) && !e.name.endsWith(".d.ts"))
    .map((e) => path.join(e.parentPath, e.name));
}

function specifiers(file: string): string[] {
  return ts.preProcessFile(readFileSync(file, "utf8"), true, true).importedFiles.map((f) => f.fileName);
}

/** Every file the core reaches through relative imports, with the chain that led to it. */
function reachable(): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  const todo = sources(CORE).map((file) => ({ file, via: [file] }));
  for (let next = todo.pop(); next; next = todo.pop()) {
    if (seen.has(next.file)) continue;
    seen.set(next.file, next.via);
    for (const spec of specifiers(next.file)) {
      if (!spec.startsWith(".")) continue;
      const target = path.resolve(path.dirname(next.file), spec.replace(/\.js$/, ".ts"));
      if (target.endsWith(".ts")) todo.push({ file: target, via: [...next.via, target] });
    }
  }
  return seen;
}

const rel = (file: string) => path.relative(ROOT_DIR, file);

describe("the diagnosis core's imports", () => {
  const files = reachable();

  it("follows the imports of every core file", () => {
    expect(files.size).toBeGreaterThan(sources(CORE).length);
  });

  it("reach nothing under channels/ or the HTTP layer", () => {
    const offending = [...files.entries()]
      .filter(
        ([file]) => FORBIDDEN_FILES.includes(file) || FORBIDDEN_DIRS.some((d) => file.startsWith(`${d}/`)),
      )
      .map(([, via]) => via.map(rel).join(" → "));
    expect(offending).toEqual([]);
  });

  it("use no web framework, provider SDK or job queue", () => {
    const offending = [...files.entries()].flatMap(([file, via]) =>
      specifiers(file)
        .filter((spec) => FORBIDDEN_PACKAGES.test(spec))
        .map((spec) => `${via.map(rel).join(" → ")}: ${spec}`),
    );
    expect(offending).toEqual([]);
  });
});
