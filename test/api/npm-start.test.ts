import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
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
