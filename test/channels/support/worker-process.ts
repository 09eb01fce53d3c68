// `npm run worker` as a real child process (channels/core/worker-main.ts under tsx), for tests that kill it.
import { type ChildProcess, spawn } from "node:child_process";
import { ROOT_DIR } from "../../../src/config.js";

export interface WorkerProcess {
  child: ChildProcess;
  /** Its log lines (pino JSON on stdout) and anything on stderr. */
  output: string[];
  /** Resolves once the worker logged that it started (model loaded, queue open). */
  ready: Promise<void>;
  /** Resolves with the exit code, or the signal that ended it. */
  exited: Promise<number | NodeJS.Signals>;
}

/** Starts a worker with exactly `env` (plus PATH and HOME): no variable of the test's own shell leaks in. */
export function startWorkerProcess(env: Record<string, string>): WorkerProcess {
  const child = spawn(process.execPath, ["--import", "tsx", "channels/core/worker-main.ts"], {
    cwd: ROOT_DIR,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  const exited = new Promise<number | NodeJS.Signals>((resolve) => {
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "SIGKILL"));
  });
  const ready = new Promise<void>((resolve, reject) => {
    const collect = (chunk: Buffer) => {
      for (const line of chunk.toString("utf8").split("\n").filter(Boolean)) {
        output.push(line);
        if (line.includes('"channel worker started"')) resolve();
      }
    };
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    void exited.then((how) =>
      reject(new Error(`worker exited (${how}) before it started:\n${output.slice(-20).join("\n")}`)),
    );
  });
  return { child, output, ready, exited };
}
