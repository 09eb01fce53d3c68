// Settings only the channel worker reads (src/config.ts holds those it shares with the API), checked once at
// start-up with every problem named at once.
import path from "node:path";
import type { ChannelProvider } from "./provider.js";

/** Where the worker proves it is alive (deploy/k8s/worker.yaml's liveness probe reads it). */
export const DEFAULT_HEARTBEAT_FILE = "/tmp/crop-diagnosis-worker.alive";

export interface WorkerSettings {
  /** How long a job's lock lives without renewal: a crashed worker's job waits this long, plus up to one
   *  stalled check, before another worker takes it over. */
  lockDurationMs: number;
  /** How often workers look for jobs whose lock lapsed. */
  stalledIntervalMs: number;
  /** Per provider id, the API base its variable names (TWILIO_API_ROOT, TELEGRAM_API_ROOT, AT_API_ROOT):
   *  a self-hosted server, a staging or test stand-in. Unset: the provider's own API. */
  apiRoots: Record<string, string>;
  /** Written every WORKER_HEARTBEAT_MS while the consumer runs: a liveness probe reads its age. */
  heartbeatFile: string;
}

type Env = Record<string, string | undefined>;

export function readWorkerSettings(
  providers: readonly ChannelProvider[],
  env: Env = process.env,
): WorkerSettings {
  const problems: string[] = [];
  const millis = (name: string, fallback: number) => {
    const raw = env[name]?.trim();
    if (!raw) return fallback;
    const value = Number(raw);
    if (Number.isInteger(value) && value >= 1_000 && value <= 600_000) return value;
    problems.push(`${name} must be whole milliseconds from 1000 to 600000 (got "${raw}")`);
    return fallback;
  };
  const lockDurationMs = millis("CHANNEL_JOB_LOCK_MS", 30_000);
  const stalledIntervalMs = millis("CHANNEL_STALLED_CHECK_MS", 30_000);
  const apiRoots: Record<string, string> = {};
  for (const { id, apiRoot } of providers) {
    const raw = env[apiRoot.variable]?.trim();
    if (!raw) continue;
    if (/^https?:\/\/[^/]/.test(raw)) apiRoots[id] = raw.replace(/\/+$/, "");
    else problems.push(`${apiRoot.variable} must be an http:// or https:// URL`);
  }
  const heartbeatFile = env.WORKER_HEARTBEAT_FILE?.trim() || DEFAULT_HEARTBEAT_FILE;
  if (!path.isAbsolute(heartbeatFile)) problems.push("WORKER_HEARTBEAT_FILE must be an absolute path");
  if (problems.length) throw new Error(`Invalid worker settings:\n  - ${problems.join("\n  - ")}`);
  return { lockDurationMs, stalledIntervalMs, apiRoots, heartbeatFile };
}
