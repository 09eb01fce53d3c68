/**
 * Compiles the service (src/, channels/) to plain JavaScript in dist/, beside a copy of their other files
 * (knowledge JSON, console assets): what `npm start`, `npm run worker`, the Docker image and the bench run.
 * Compiling at each start with tsx's loader instead kept 40 to 60 MiB more in the API's memory (README,
 * Libraries; `npm run bench` runs the compiled server). esbuild compiles file by file, as tsx does, so the
 * JavaScript is what the tests ran as TypeScript; type checking is `npm test`'s.
 *
 * A dist/ built from the same sources is kept as it is (its stamp says so): a second process started from it
 * does not replace the files the first one runs. After a change, the new tree replaces the old in one rename.
 * `npx tsx scripts/build.ts` (npm start and npm run worker run it first).
 */
import { createHash } from "node:crypto";
import { cp, mkdtemp, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build, version } from "esbuild";
import { ROOT_DIR } from "../src/root-dir.js";

const SOURCES = ["src", "channels"];
export const DIST_DIR = path.join(ROOT_DIR, "dist");
/** In dist/: the stamp of the sources it was built from. */
export const STAMP = ".sources.sha256";
/** In dist/: src/threadpool.ts as CommonJS, for `node --require`. */
export const PRELOAD = "threadpool.cjs";

const isTypeScript = (file: string) => /\.tsx?$/.test(file);

/** Every file under `dir`, relative to the root. */
export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(path.join(ROOT_DIR, dir), { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(ROOT_DIR, path.join(entry.parentPath, entry.name)))
    .sort();
}

/** What dist/ is made from: the sources, this script, the compiler settings and esbuild's version. */
async function stampOf(files: string[]): Promise<string> {
  const hash = createHash("sha256").update(version);
  for (const file of [...files, "scripts/build.ts", "tsconfig.json"]) {
    hash.update(`${file}\0`).update(await readFile(path.join(ROOT_DIR, file)));
  }
  return hash.digest("hex");
}

export async function buildDist(): Promise<void> {
  // Declaration files only type the TypeScript; nothing runs them.
  const files = (await Promise.all(SOURCES.map(filesUnder))).flat().filter((file) => !file.endsWith(".d.ts"));
  const stamp = await stampOf(files);
  const built = await readFile(path.join(DIST_DIR, STAMP), "utf8").catch(() => "");
  if (built === stamp) return;

  const staging = await mkdtemp(path.join(ROOT_DIR, "dist.building-"));
  try {
    await build({
      absWorkingDir: ROOT_DIR,
      entryPoints: files.filter(isTypeScript),
      outdir: staging,
      outbase: ".",
      format: "esm",
      platform: "node",
      target: "node20",
      logLevel: "warning",
    });
    // The thread pool's size, preloaded as CommonJS (`node --require`): it must run before the ES module
    // loader, which starts the pool.
    await build({
      absWorkingDir: ROOT_DIR,
      entryPoints: ["src/threadpool.ts"],
      outfile: path.join(staging, PRELOAD),
      bundle: true,
      format: "cjs",
      platform: "node",
      target: "node20",
      logLevel: "warning",
    });
    await Promise.all(
      files
        .filter((file) => !isTypeScript(file))
        .map((file) => cp(path.join(ROOT_DIR, file), path.join(staging, file))),
    );
    await writeFile(path.join(staging, STAMP), stamp);
    const old = `${staging}.old`;
    await rename(DIST_DIR, old).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error;
    });
    await rename(staging, DIST_DIR).catch((error: NodeJS.ErrnoException) => {
      // Another build put its tree there first, from the same sources: keep it.
      if (error.code !== "ENOTEMPTY" && error.code !== "EEXIST") throw error;
    });
    await rm(old, { recursive: true, force: true });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await buildDist();
