import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, ROOT_DIR } from "../../src/config.js";
import { createDiagnoser } from "../../src/diagnosis/diagnose.js";
import type { Diagnoser } from "../../src/diagnosis/diagnoser.js";
import { DATASETS_DIR, HAVE_DATASETS } from "../diagnosis/helpers.js";
import { testApp } from "./support/app.js";
import { multipartBody } from "./support/form.js";
import { photo } from "./support/images.js";

// `npm run diagnose` as a real process, against the API's inject() answer for the same photo and fields.
type App = Awaited<ReturnType<typeof testApp>>["app"];
let app: App;
let diagnoser: Diagnoser;
let dir: string;

beforeAll(async () => {
  diagnoser = await createDiagnoser({ modelPath: loadConfig({}).modelPath, threads: 1 });
  ({ app } = await testApp({ deps: { diagnoser } }));
  dir = await mkdtemp(path.join(tmpdir(), "cli-"));
}, 120_000);
afterAll(async () => {
  await app.close();
  await diagnoser.close();
  await rm(dir, { recursive: true, force: true });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The CLI in its own process, with a bare environment so the caller's variables do not leak in. */
async function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const run = promisify(execFile)(process.execPath, ["--import", "tsx", "src/cli.ts", ...args], {
    cwd: ROOT_DIR,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
  });
  try {
    const { stdout, stderr } = await run;
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

async function saved(name: string, bytes: Buffer): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, bytes);
  return file;
}

const FIELDS = {
  crop_type: "tomato",
  region: "Kenya",
  growth_stage: "flowering",
  description: "Brown spots with yellow rings on the lower leaves",
  language: "sw",
  detail_level: "simple",
  include_bbox: "true",
  user_data: '{"device":"feature_phone"}',
};
const FLAGS = [
  ["--crop", FIELDS.crop_type],
  ["--region", FIELDS.region],
  ["--growth-stage", FIELDS.growth_stage],
  ["--description", FIELDS.description],
  ["--language", FIELDS.language],
  ["--detail-level", FIELDS.detail_level],
  ["--bbox"],
  ["--user-data", FIELDS.user_data],
].flat();

/** The same photo and fields through the CLI and through POST /diagnosis/: both bodies, parsed. */
async function bothWays(image: Buffer) {
  const file = await saved("photo.jpg", image);
  const run = await cli([file, ...FLAGS]);
  expect(run.code, run.stderr).toBe(0);
  const { payload, headers } = await multipartBody(FIELDS, { data: image });
  const res = await app.inject({ method: "POST", url: "/diagnosis/", payload, headers });
  expect(res.statusCode, res.body).toBe(200);
  return { fromCli: JSON.parse(run.stdout), fromApi: res.json() };
}

/** Every key path of a JSON value, arrays by their first element: the shape, without the values. */
function shape(value: unknown, at = ""): string[] {
  if (Array.isArray(value)) return [`${at}[]`, ...(value.length > 0 ? shape(value[0], `${at}[]`) : [])];
  if (value && typeof value === "object") {
    return Object.entries(value).flatMap(([key, v]) => [`${at}.${key}`, ...shape(v, `${at}.${key}`)]);
  }
  return [];
}

describe("npm run diagnose", () => {
  it("prints the API's result for the same photo and fields, but for its own request id", async () => {
    const { fromCli, fromApi } = await bothWays(await photo(640, 480, "jpeg"));
    expect(shape(fromCli)).toEqual(shape(fromApi));
    expect(fromCli.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(fromCli.request_id).not.toBe(fromApi.request_id);
    expect({ ...fromCli, request_id: "" }).toEqual({ ...fromApi, request_id: "" });
    // The fields were understood: Swahili at the simple level, and boxes asked for.
    expect(Array.isArray(fromCli.detections)).toBe(true);
    expect(fromCli.additional_notes).toBeTruthy();
  }, 120_000);

  it.skipIf(!HAVE_DATASETS)(
    "names the same diseases, boxes included, for a diseased leaf",
    async () => {
      const leaf = await diagnosedTomatoPhoto();
      const { fromCli, fromApi } = await bothWays(leaf);
      expect(fromApi.diagnoses.length).toBeGreaterThan(0);
      expect(fromCli.diagnoses).toEqual(fromApi.diagnoses);
      expect(fromCli.detections).toEqual(fromApi.detections);
      expect(fromCli.treatment).toEqual(fromApi.treatment);
    },
    120_000,
  );

  it("exits 1 with one line for an unusable photo, and prints no JSON", async () => {
    const jpeg = await photo(320, 240, "jpeg");
    const file = await saved("cut.jpg", jpeg.subarray(0, 600));
    const run = await cli([file]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain(`error: ${file}: the JPEG image is truncated or corrupt\n`);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  }, 120_000);

  it("exits 1 with one line for a bad configuration", async () => {
    const run = await cli([await saved("ok.jpg", await photo(64, 64, "jpeg"))], {
      PORT: "eighty",
      HOST: "a b",
    });
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split("\n")).toEqual([
      'error: invalid configuration: PORT must be an integer from 0 to 65535 (got "eighty"); ' +
        'HOST must be an IP address (e.g. 0.0.0.0, 127.0.0.1, ::) or a host name, without scheme or port (got "a b")',
    ]);
  }, 120_000);

  it("exits 2 for a usage mistake, before loading anything", async () => {
    const file = await saved("ok.jpg", await photo(64, 64, "jpeg"));
    for (const args of [
      [file, "--language", "de"],
      [file, "--user-data", "[1]"],
    ]) {
      const run = await cli(args);
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr.split("\n")[0], args.join(" ")).toMatch(/^error: /);
      expect(run.stderr).toContain("Usage: npm run diagnose");
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }
  }, 120_000);
});

/**
 * A photo the API diagnoses with FIELDS: a real diseased tomato leaf from the shared datasets, re-encoded here
 * (so the JPEG itself is generated), the first of them on which the model names a disease.
 */
async function diagnosedTomatoPhoto(): Promise<Buffer> {
  const manifest = await readFile(path.join(DATASETS_DIR, "leaf-photos", "manifest.csv"), "utf8");
  const files = manifest
    .split(/\r?\n/)
    .map((line) => line.split(","))
    .filter(([, label]) => label?.startsWith("tomato__") && !label.endsWith("__healthy"))
    .map(([file]) => file!);
  for (const file of files.filter((_, i) => i % 50 === 0).slice(0, 40)) {
    const jpeg = await sharp(path.join(DATASETS_DIR, "leaf-photos", file))
      .jpeg({ quality: 92 })
      .toBuffer();
    const { payload, headers } = await multipartBody(FIELDS, { data: jpeg });
    const res = await app.inject({ method: "POST", url: "/diagnosis/", payload, headers });
    if (res.json().diagnoses.length > 0) return jpeg;
  }
  throw new Error("the model named a disease on none of 40 diseased tomato photos");
}
