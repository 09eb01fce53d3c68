import { createHash } from "node:crypto";
import { isIP } from "node:net";
import path from "node:path";
import { LANGUAGES, type Language } from "./diagnosis/types.js";
import { LIMITS, type Limit } from "./limits.js";
import { createLogger } from "./logger.js";
import { ROOT_DIR } from "./root-dir.js";
import { DEFAULT_INFERENCE_THREADS } from "./threads.js";

export { ROOT_DIR };

export interface ApiKey {
  name: string;
  /** Hex SHA-256 of the key: the key itself is never configured, stored or logged. */
  sha256: string;
  perMinute: number;
}

export interface TwilioConfig {
  accountSid: string;
  authToken: string;
  smsFrom: string | undefined;
  whatsappFrom: string | undefined;
  /**
   * Approved WhatsApp templates (Content SIDs, HX...) telling the farmer something waits for them, by language
   * ("*": any other): sent when a reply falls outside WhatsApp's 24-hour window, which only templates may cross.
   * WhatsApp approves a template per language.
   */
  whatsappNoticeSids: WhatsAppNoticeSids;
}

export interface TelegramConfig {
  botToken: string;
  webhookSecret: string;
}

export interface AfricasTalkingConfig {
  username: string;
  apiKey: string;
  senderId: string | undefined;
  webhookToken: string;
  allowedIps: string[];
}

export interface Config {
  port: number;
  host: string;
  logLevel: string;
  redisUrl: string | undefined;
  /** Put before every Redis key and BullMQ queue name, so deployments (and test runs) can share one Redis. */
  redisPrefix: string;
  trustProxy: boolean | number | string[];
  publicBaseUrl: string | undefined;
  modelPath: string;
  inferenceThreads: number;
  /** Per-IP requests per minute: diagnosis and health (spec section 8), and docs, assets and unknown paths. */
  rateLimits: { diagnosis: number; health: number; other: number };
  apiKeys: ApiKey[];
  /** src/limits.ts: timeouts and upload capacity. */
  limits: { [K in keyof typeof LIMITS]: number };
  twilio: TwilioConfig | undefined;
  telegram: TelegramConfig | undefined;
  africasTalking: AfricasTalkingConfig | undefined;
  /** Signs the console's session cookie; a random one per process when unset (sessions end on restart). */
  sessionSecret: string | undefined;
  /** Staff accounts without Redis: a JSON file the `npm run staff` command writes. */
  staffFile: string;
  /** The time zone the console shows times in (IANA name): where its staff work, not where the server runs. */
  consoleTimeZone: string;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

export function hashApiKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

type Env = Record<string, string | undefined>;

// Collects every problem instead of stopping at the first, so an operator fixes the environment in one go.
class Reader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  str(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value ? value : undefined;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const raw = this.str(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      this.problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  }

  limit(limit: Limit): number {
    return this.int(limit.env, limit.default, limit.min, limit.max);
  }

  url(name: string, protocols: string[]): string | undefined {
    const raw = this.str(name);
    if (raw === undefined) return undefined;
    try {
      const parsed = new URL(raw);
      if (!protocols.includes(parsed.protocol)) throw new Error("protocol");
      return raw;
    } catch {
      this.problems.push(`${name} must be a ${protocols.join(" or ")} URL`);
      return undefined;
    }
  }

  /** A group of variables that only makes sense all together: all set, none set, or a clear complaint. */
  group<T>(names: string[], build: (values: string[]) => T): T | undefined {
    const values = names.map((n) => this.str(n));
    const set = values.filter((v) => v !== undefined).length;
    if (set === 0) return undefined;
    if (set < names.length) {
      const missing = names.filter((_, i) => values[i] === undefined);
      this.problems.push(`${missing.join(", ")} must be set together with ${names.join(", ")}`);
      return undefined;
    }
    return build(values as string[]);
  }
}

// RFC 1123 host names: dot-separated labels of letters, digits and inner hyphens, 253 characters in all.
const HOSTNAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

export type WhatsAppNoticeSids = Partial<Record<Language | "*", string>>;

const CONTENT_SID = /^HX[0-9a-f]{32}$/;

/**
 * TWILIO_WHATSAPP_NOTICE_SID: one Content SID for every farmer, or `language:SID` pairs (`sw:HX…,en:HX…`),
 * with a bare SID among them for the other languages.
 */
function parseNoticeSids(raw: string | undefined, problems: string[]): WhatsAppNoticeSids {
  const sids: WhatsAppNoticeSids = {};
  for (const entry of (raw ?? "")
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean)) {
    const [first, second] = entry.split(":").map((p) => p.trim());
    const [language, sid] = second === undefined ? ["*", first] : [first, second];
    if (language !== "*" && !(LANGUAGES as readonly string[]).includes(language!)) {
      problems.push(
        `TWILIO_WHATSAPP_NOTICE_SID names language "${language}": one of ${LANGUAGES.join(", ")}`,
      );
    } else if (!CONTENT_SID.test(sid ?? "")) {
      problems.push(
        `TWILIO_WHATSAPP_NOTICE_SID must hold Content SIDs: HX and 32 hexadecimal digits (got "${sid}")`,
      );
    } else sids[language as Language | "*"] = sid;
  }
  return sids;
}

/** The address to listen on: an IPv4 or IPv6 address, or a host name such as `localhost`. */
function parseHost(raw: string | undefined, problems: string[]): string {
  if (raw === undefined) return "0.0.0.0";
  // All-numeric names ("999.1.1.1") would fit HOSTNAME but are mistyped addresses, never hosts.
  if (isIP(raw) !== 0 || (HOSTNAME.test(raw) && !/^[\d.]+$/.test(raw))) return raw;
  problems.push(
    `HOST must be an IP address (e.g. 0.0.0.0, 127.0.0.1, ::) or a host name, without scheme or port (got "${raw}")`,
  );
  return "0.0.0.0";
}

function parseTrustProxy(raw: string | undefined, problems: string[]): boolean | number | string[] {
  if (raw === undefined || raw === "false") return false;
  if (raw === "true") return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const list = raw.split(",").map((s) => s.trim());
  if (list.some((s) => !/^[0-9a-fA-F:.]+(\/\d+)?$/.test(s))) {
    problems.push('TRUST_PROXY must be "true", "false", a hop count, or a comma-separated list of IPs/CIDRs');
    return false;
  }
  return list;
}

// API_KEYS="partner-a:<sha256 hex>:1000,partner-b:<sha256 hex>:300"
function parseApiKeys(raw: string | undefined, problems: string[]): ApiKey[] {
  if (raw === undefined) return [];
  const keys: ApiKey[] = [];
  for (const item of raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [name, sha256, limit] = item.split(":");
    const perMinute = Number(limit ?? "");
    if (
      !name ||
      !sha256 ||
      !/^[0-9a-f]{64}$/.test(sha256) ||
      !Number.isInteger(perMinute) ||
      perMinute < 1 ||
      perMinute > 1000
    ) {
      problems.push(`API_KEYS entry "${name ?? ""}" must be name:<64 hex sha256>:<limit 1..1000>`);
      continue;
    }
    // A partner reads back the results made under its name: two entries sharing one would read each other's.
    if (keys.some((k) => k.name === name)) {
      problems.push(`API_KEYS names "${name}" twice: each partner needs a name of its own`);
      continue;
    }
    if (keys.some((k) => k.sha256 === sha256)) {
      problems.push(
        `API_KEYS gives "${name}" the same key as another entry: each partner needs a key of its own`,
      );
      continue;
    }
    keys.push({ name, sha256, perMinute });
  }
  return keys;
}

export function loadConfig(env: Env = process.env): Config {
  const r = new Reader(env);
  const config: Config = {
    port: r.int("PORT", 8000, 0, 65535),
    host: parseHost(r.str("HOST"), r.problems),
    logLevel: r.str("LOG_LEVEL") ?? "info",
    redisUrl: r.url("REDIS_URL", ["redis:", "rediss:"]),
    redisPrefix: r.str("REDIS_PREFIX") ?? "",
    trustProxy: parseTrustProxy(r.str("TRUST_PROXY"), r.problems),
    publicBaseUrl: r.url("PUBLIC_BASE_URL", ["http:", "https:"]),
    modelPath: path.resolve(ROOT_DIR, r.str("MODEL_PATH") ?? "models/disease-classifier.onnx"),
    inferenceThreads: r.int("INFERENCE_THREADS", DEFAULT_INFERENCE_THREADS, 1, 64),
    rateLimits: {
      diagnosis: r.int("RATE_LIMIT_DIAGNOSIS", 30, 1, 100_000),
      health: r.int("RATE_LIMIT_HEALTH", 100, 1, 100_000),
      other: r.int("RATE_LIMIT_OTHER", 300, 1, 100_000),
    },
    apiKeys: parseApiKeys(r.str("API_KEYS"), r.problems),
    limits: {
      requestTimeoutMs: r.limit(LIMITS.requestTimeoutMs),
      idleTimeoutMs: r.limit(LIMITS.idleTimeoutMs),
      uploadsInFlight: r.limit(LIMITS.uploadsInFlight),
      uploadsWaiting: r.limit(LIMITS.uploadsWaiting),
    },
    twilio: r.group(["TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN"], ([accountSid, authToken]) => ({
      accountSid: accountSid!,
      authToken: authToken!,
      smsFrom: r.str("TWILIO_SMS_FROM"),
      whatsappFrom: r.str("TWILIO_WHATSAPP_FROM"),
      whatsappNoticeSids: parseNoticeSids(r.str("TWILIO_WHATSAPP_NOTICE_SID"), r.problems),
    })),
    telegram: r.group(["TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET"], ([botToken, webhookSecret]) => ({
      botToken: botToken!,
      webhookSecret: webhookSecret!,
    })),
    africasTalking: r.group(
      ["AT_USERNAME", "AT_API_KEY", "AT_WEBHOOK_TOKEN"],
      ([username, apiKey, webhookToken]) => ({
        username: username!,
        apiKey: apiKey!,
        senderId: r.str("AT_SENDER_ID"),
        webhookToken: webhookToken!,
        allowedIps: (r.str("AT_ALLOWED_IPS") ?? "")
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean),
      }),
    ),
    sessionSecret: r.str("CONSOLE_SESSION_SECRET"),
    staffFile: path.resolve(ROOT_DIR, r.str("STAFF_FILE") ?? "data/staff.json"),
    consoleTimeZone: r.str("CONSOLE_TIME_ZONE") ?? "UTC",
  };
  if (!isTimeZone(config.consoleTimeZone))
    r.problems.push(
      `CONSOLE_TIME_ZONE must be an IANA time zone such as Africa/Nairobi (got "${config.consoleTimeZone}")`,
    );
  if (config.sessionSecret !== undefined && config.sessionSecret.length < 32)
    r.problems.push("CONSOLE_SESSION_SECRET must be at least 32 characters (e.g. openssl rand -hex 32)");
  const levels = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];
  if (!levels.includes(config.logLevel)) r.problems.push(`LOG_LEVEL must be one of ${levels.join(", ")}`);
  if (!/^[A-Za-z0-9_.:-]{0,64}$/.test(config.redisPrefix)) {
    r.problems.push("REDIS_PREFIX may only hold A-Z, a-z, 0-9, _ . : and -, at most 64 characters");
  }
  if (config.telegram && !/^[A-Za-z0-9_-]{1,256}$/.test(config.telegram.webhookSecret)) {
    r.problems.push(
      "TELEGRAM_WEBHOOK_SECRET may only hold A-Z, a-z, 0-9, _ and - (Telegram's rule), 1-256 characters",
    );
  }
  if (config.africasTalking && config.africasTalking.webhookToken.length < 16) {
    r.problems.push("AT_WEBHOOK_TOKEN must be at least 16 characters: it is the only secret of that webhook");
  }
  if ((config.twilio || config.telegram || config.africasTalking) && !config.redisUrl) {
    r.problems.push("channels (Twilio, Telegram, Africa's Talking) need REDIS_URL: their jobs run on BullMQ");
  }
  if (config.twilio && !config.publicBaseUrl) {
    r.problems.push("TWILIO_* needs PUBLIC_BASE_URL: Twilio signs the public URL of the webhook");
  }
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}

/**
 * The configuration, or exit 1 with every problem named: one JSON line like every other line the service
 * writes (a log collector takes it as it takes the rest), before any logger of the process exists.
 */
export function readConfigOrExit(env: Env = process.env): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    createLogger("info").fatal({ problems: error.problems }, "invalid configuration");
    process.exit(1);
  }
}

/**
 * The Redis namespaces of one deployment: results and language memory, BullMQ's queue, the rate-limit
 * counters. REDIS_PREFIX goes before each; without it they are the historical defaults.
 */
export function redisNamespaces(config: Pick<Config, "redisPrefix">) {
  const p = config.redisPrefix;
  return { keys: `${p}cd:`, queue: `${p}bull`, rateLimits: `${p}ratelimit` };
}

function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
