import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildDist, DIST_DIR, filesUnder, PRELOAD, STAMP } from "../../scripts/build.js";
import { ROOT_DIR } from "../../src/config.js";

// How operators stop `npm start`: a signal to the npm process must stop the server, never orphan it.
function npmStart(): { npm: ChildProcessWithoutNullStreams; output: () => string } {
  const npm = spawn("npm", ["start"], {
    cwd: ROOT_DIR,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", PORT: "0", HOST: "127.0.0.1" },
  });
  let output = "";
  npm.stdout.on("data", (d) => {
    output += d;
  });
  npm.stderr.on("data", (d) => {
    output += d;
  });
  return { npm, output: () => output };
}

/** The server's own pid, from its "Server listening" log line (pino writes the pid on every line). */
async function serverPid(npm: ChildProcessWithoutNullStreams, output: () => string): Promise<number> {
  for (let i = 0; i < 900; i++) {
    const line = output()
      .split("\n")
      .find((l) => l.includes('"msg":"Server listening at'));
    if (line) return (JSON.parse(line) as { pid: number }).pid;
    if (npm.exitCode !== null) throw new Error(output());
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the server did not start:\n${output()}`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function gone(pid: number, withinMs: number): Promise<boolean> {
  for (const deadline = Date.now() + withinMs; Date.now() < deadline; ) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !alive(pid);
}

describe("npm start", () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`stops the server gracefully when the npm process gets ${signal}`, async () => {
      const { npm, output } = npmStart();
      const pid = await serverPid(npm, output);
      expect(pid).not.toBe(npm.pid);
      npm.kill(signal);
      await once(npm, "exit");
      expect(await gone(pid, 15_000), output()).toBe(true);
      expect(output()).toContain(`"signal":"${signal}","msg":"shutting down"`);
    }, 120_000);
  }

  it("stops the server too when npm is killed outright (SIGKILL cannot be passed on)", async () => {
    const { npm, output } = npmStart();
    const pid = await serverPid(npm, output);
    npm.kill("SIGKILL");
    await once(npm, "exit");
    expect(await gone(pid, 20_000)).toBe(true);
  }, 120_000);
});

describe("the compiled service (scripts/build.ts)", () => {
  it("compiles every TypeScript module of src/ and channels/ to dist/ and copies their other files as they are", async () => {
    await buildDist();
    const sources = [...(await filesUnder("src")), ...(await filesUnder("channels"))];
    const expected = sources
      .filter((file) => !file.endsWith(".d.ts"))
      .map((file) => file.replace(/\.tsx?$/, ".js"))
      .sort();
    const built = (await filesUnder("dist")).map((file) => path.relative("dist", file));
    // Beside the modules: the sources' stamp, and the thread pool's CommonJS preload.
    expect(built.filter((file) => file !== STAMP && file !== PRELOAD).sort()).toEqual(expected);
    expect(built).toContain(PRELOAD);
    for (const file of sources.filter((f) => !/\.tsx?$/.test(f))) {
      expect(await readFile(path.join(DIST_DIR, file)), file).toEqual(
        await readFile(path.join(ROOT_DIR, file)),
      );
    }
  });

  it("npm run worker runs the compiled worker: without Redis it stops at once with its configuration error", async () => {
    const worker = spawn("npm", ["run", "worker"], {
      cwd: ROOT_DIR,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" },
    });
    let output = "";
    worker.stdout.on("data", (d) => {
      output += d;
    });
    const [code] = (await once(worker, "exit")) as [number];
    expect(code, output).not.toBe(0);
    const fatal = output
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { level: number; msg: string });
    expect(fatal).toContainEqual(
      expect.objectContaining({ level: 60, msg: expect.stringContaining("REDIS_URL") }),
    );
  }, 60_000);
});
