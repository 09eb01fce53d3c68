import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The repository's root (models/, locales/, package.json): the nearest folder above this module that holds
 * package.json, whether it runs as TypeScript from src/ or compiled from dist/src/ (scripts/build.ts).
 */
export const ROOT_DIR = findRoot(path.dirname(fileURLToPath(import.meta.url)));

function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}
