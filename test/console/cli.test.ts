// `npm run staff` and `npm run dataset:export` as processes, on the real Redis under a REDIS_PREFIX of their own:
// what they write is what the service (same prefix) reads.
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import sharp from "sharp";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig, ROOT_DIR, redisNamespaces } from "../../src/config.js";
import { createRecords } from "../../src/results/records.js";
import { answerCase } from "../../src/review/answer.js";
import { createStaffStore } from "../../src/staff/accounts.js";
import { checkPassword } from "../../src/staff/passwords.js";
import { EXAMPLE_PHOTO, labelledExample, resultFixture } from "../channels/support/fixtures.js";

const REDIS_PREFIX = `test-cli-${process.pid}-${Date.now()}-`;
const env = { ...process.env, REDIS_URL: "redis://127.0.0.1:6379", REDIS_PREFIX, LOG_LEVEL: "silent" };
const keys = redisNamespaces(loadConfig(env)).keys;
const redis = new Redis("redis://127.0.0.1:6379");
const dirs: string[] = [];

afterAll(async () => {
  const ours = await redis.keys(`${REDIS_PREFIX}*`);
  if (ours.length) await redis.del(...ours);
  await redis.quit();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

function run(script: string, args: string[], input?: string) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      ["--import", "tsx", path.join(ROOT_DIR, script), ...args],
      { env, cwd: ROOT_DIR },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(input ?? "");
  });
}

describe("npm run staff", () => {
  it("adds an account the service can sign in with, password from standard input, hashed", async () => {
    const password = "a long enough password";
    const added = await run(
      "src/staff/cli.ts",
      ["add", "amina", "--role", "admin", "--name", "Amina Njeri"],
      `${password}\n`,
    );
    expect(added).toMatchObject({ code: 0, stdout: "added amina (admin)\n" });
    const account = await createStaffStore(redis, { prefix: keys, file: "/nonexistent" }).get("amina");
    expect(account).toMatchObject({ name: "Amina Njeri", role: "admin", disabled: false });
    expect(await checkPassword(account?.passwordHash, password)).toBe(true);
    expect(JSON.stringify(account)).not.toContain(password);

    expect((await run("src/staff/cli.ts", ["disable", "amina"])).code).toBe(0);
    const disabled = await createStaffStore(redis, { prefix: keys, file: "/nonexistent" }).get("amina");
    expect(disabled).toMatchObject({ disabled: true, version: 2 });
  });

  it("refuses a short password, an unknown role and a second account of the same name, with usage", async () => {
    expect(await run("src/staff/cli.ts", ["add", "baraka", "--role", "officer"], "short\n")).toMatchObject({
      code: 2,
    });
    const role = await run(
      "src/staff/cli.ts",
      ["add", "baraka", "--role", "boss"],
      "a long enough password\n",
    );
    expect(role.code).toBe(2);
    expect(role.stderr).toContain("--role officer|admin");
    const again = await run(
      "src/staff/cli.ts",
      ["add", "amina", "--role", "officer"],
      "a long enough password\n",
    );
    expect(again.stderr).toContain("amina already exists");
  });
});

describe("npm run dataset:export", () => {
  it("writes the labelled examples of the service's Redis, and refuses a directory that is not empty", async () => {
    const records = createRecords(redis, { prefix: keys });
    const photo = await sharp({ create: { width: 640, height: 480, channels: 3, background: "#3c8c32" } })
      .jpeg()
      .toBuffer();
    const stored = await records.record(resultFixture({ outcome: "unsure", diagnoses: [] }), {
      language: "en",
      source: "console",
      photo,
      consent: { basis: "staff_recorded", at: new Date().toISOString() },
    });
    const id = stored.result.request_id;
    await records.reviews.claim(id, "amina");
    const answered = await answerCase({ records, isHealthy: () => false }, id, {
      kind: "corrected",
      classId: "bean__rust",
      officer: "amina",
      at: new Date().toISOString(),
    });
    expect(answered).toMatchObject({ status: "done", kept: true });

    const dir = await mkdtemp(path.join(tmpdir(), "dataset-"));
    dirs.push(dir);
    const exported = await run("src/review/export-cli.ts", [dir]);
    expect(exported.code).toBe(0);
    expect(exported.stdout).toContain("1 photos in 1 classes");
    expect(await readdir(path.join(dir, "bean__rust"))).toEqual([`${id}.jpg`]);
    expect(await readFile(path.join(dir, "manifest.csv"), "utf8")).toContain(
      `bean__rust/${id}.jpg,bean__rust,bean,rust,640,480,console`,
    );
    const again = await run("src/review/export-cli.ts", [dir]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("is not empty");
  });
});

describe("npm run dataset:delete", () => {
  it("deletes labelled examples by result code or id, also once the result has expired", async () => {
    const records = createRecords(redis, { prefix: keys });
    // No stored result behind them: theirs expired.
    await records.examples.save(labelledExample({ id: "expired-result-1", code: "K7M4QX" }), EXAMPLE_PHOTO);
    await records.examples.save(labelledExample({ id: "expired-result-2", code: "M4QX7K" }), EXAMPLE_PHOTO);
    const byCode = await run("src/review/delete-cli.ts", ["k7m4qx"]);
    expect(byCode).toMatchObject({ code: 0, stdout: "deleted K7M4QX (expired-result-1)\n" });
    const byId = await run("src/review/delete-cli.ts", ["expired-result-2", "NOPE22"]);
    expect(byId.code).toBe(1);
    expect(byId.stdout).toBe("deleted M4QX7K (expired-result-2)\n");
    expect(byId.stderr).toContain("no labelled example NOPE22");
    expect(await records.examples.list()).not.toContainEqual(
      expect.objectContaining({ id: "expired-result-1" }),
    );
    expect((await run("src/review/delete-cli.ts", [])).code).toBe(2);
  });
});
