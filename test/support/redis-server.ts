// A private redis-server on a free loopback port, for tests that stop and restart Redis (the shared one on
// 6379 serves every other test and is never touched).
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";

export interface PrivateRedis {
  port: number;
  url: string;
  /** Starts it again on the same port (empty: it keeps nothing on disk). */
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const redis: PrivateRedis = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      const proc = spawn(
        "redis-server",
        ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      child = proc;
      let output = "";
      await new Promise<void>((resolve, reject) => {
        proc.stdout?.on("data", (chunk: Buffer) => {
          output += chunk.toString();
          if (output.includes("Ready to accept connections")) resolve();
        });
        proc.once("exit", (code) => reject(new Error(`redis-server exited (${code}):\n${output}`)));
      });
    },
    async stop() {
      const proc = child;
      if (!proc || proc.exitCode !== null) return;
      const exited = once(proc, "exit");
      proc.kill("SIGTERM");
      await exited;
    },
  };
  await redis.start();
  return redis;
}
