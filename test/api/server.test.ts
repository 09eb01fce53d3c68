import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { DAMAGED_SPS_HEIC } from "../diagnosis/fixtures.js";

// `npm start`'s entry point as a real process: configuration errors, listening, graceful shutdown.
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

function start(env: Record<string, string>): { child: ChildProcessWithoutNullStreams; output: () => string } {
  const child = spawn(process.execPath, ["--import", "tsx", "src/server.ts"], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
  });
  let output = "";
  child.stdout.on("data", (d) => {
    output += d;
  });
  child.stderr.on("data", (d) => {
    output += d;
  });
  return { child, output: () => output };
}

describe("src/server.ts", () => {
  it("exits 1 with one JSON line naming every bad variable, and no stack trace", async () => {
    const { child, output } = start({ PORT: "eighty", API_KEYS: "partner:nothex:10", LOG_LEVEL: "loud" });
    const [code] = await once(child, "exit");
    expect(code).toBe(1);
    const lines = output().trim().split("\n");
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!) as { level: number; msg: string; problems: string[] };
    expect(line).toMatchObject({ level: 60, msg: "invalid configuration" });
    expect(line.problems).toContain('PORT must be an integer from 0 to 65535 (got "eighty")');
    expect(line.problems.some((p) => p.startsWith('API_KEYS entry "partner"'))).toBe(true);
    expect(line.problems.some((p) => p.startsWith("LOG_LEVEL must be one of"))).toBe(true);
  });

  it("serves on PORT/HOST, logs only JSON lines with request ids, and shuts down gracefully on SIGTERM", async () => {
    const { child, output } = start({ PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info" });
    let url: string | undefined;
    for (let i = 0; i < 600 && !url; i++) {
      url = /"msg":"Server listening at (http:\/\/127\.0\.0\.1:\d+)"/.exec(output())?.[1];
      if (child.exitCode !== null) throw new Error(output());
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(url, output()).toBeDefined();
    const res = await fetch(`${url}/health`);
    expect(res.status).toBe(200);
    const id = res.headers.get("x-request-id");
    // The log line travels through another pipe than the response: wait for it.
    for (let i = 0; i < 100 && !output().includes(`"request_id":"${id}"`); i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(output()).toContain(`"request_id":"${id}"`);

    // A HEIC that libheif's HEVC decoder complains about on its thread's console.
    const form = new FormData();
    form.append("image", new Blob([DAMAGED_SPS_HEIC], { type: "image/heic" }), "leaf.heic");
    const refused = await fetch(`${url}/diagnosis/`, { method: "POST", body: form });
    expect(refused.status).toBe(400);
    const refusedId = refused.headers.get("x-request-id");
    for (let i = 0; i < 100 && !output().includes(`"request_id":"${refusedId}"`); i++)
      await new Promise((r) => setTimeout(r, 50));

    child.kill("SIGTERM");
    const [code] = await once(child, "exit");
    expect(code).toBe(0);
    expect(output()).toContain('"signal":"SIGTERM"');
    const lines = output().trim().split("\n");
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    const unusable = lines.map((l) => JSON.parse(l)).find((l) => l.request_id === refusedId && l.cause);
    expect(unusable?.cause).toMatch(/SPS error/);
  }, 90_000);
});
