import { createHash } from "node:crypto";
import type { FastifyInstance, LightMyRequestResponse } from "fastify";
import { Redis } from "ioredis";
import { buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import type { Diagnoser } from "../../src/diagnosis/diagnoser.js";
import { createKnowledge } from "../../src/diagnosis/kb.js";
import { createRecords, type Records } from "../../src/results/records.js";
import { createResultSink } from "../../src/results/sink.js";
import type { StoredResult } from "../../src/results/types.js";
import { createStaffStore, type Role, type StaffStore } from "../../src/staff/accounts.js";
import { hashPassword } from "../../src/staff/passwords.js";
import { capturedLogger } from "../api/support/app.js";
import { multipartBody } from "../api/support/form.js";
import { StubDiagnoser } from "../api/support/stub-diagnoser.js";

export const PARTNER_KEYS = { a: "partner-a-key-0123456789", b: "partner-b-key-0123456789" };

export interface ConsoleTestApp {
  app: FastifyInstance;
  redis: Redis;
  records: Records;
  staff: StaffStore;
  logs: () => string[];
  /** The stored result of a REST request, once the result sink (which runs after the answer) is done with it. */
  recorded(requestId: string): Promise<StoredResult | undefined>;
  addStaff(username: string, password: string, role?: Role): Promise<void>;
  close(): Promise<void>;
}

/** The REST app with the console, on the real Redis under a key prefix of its own (a stub core by default). */
export async function consoleTestApp(
  name: string,
  {
    diagnoser = new StubDiagnoser(),
    enqueueAnswer,
    enqueueForget,
  }: {
    diagnoser?: Diagnoser;
    enqueueAnswer?: (requestId: string, owner?: string) => Promise<void>;
    enqueueForget?: (owner: string) => Promise<void>;
  } = {},
): Promise<ConsoleTestApp> {
  const prefix = `test-console-${name}-${process.pid}-${Date.now()}:`;
  const redis = new Redis("redis://127.0.0.1:6379");
  const records = createRecords(redis, { prefix });
  const staff = createStaffStore(redis, { prefix, file: "/nonexistent" });
  const { logger, lines } = capturedLogger();
  const digest = (key: string) => createHash("sha256").update(key).digest("hex");
  const config = loadConfig({
    API_KEYS: `partner-a:${digest(PARTNER_KEYS.a)}:100,partner-b:${digest(PARTNER_KEYS.b)}:100`,
    CONSOLE_SESSION_SECRET: "a-session-secret-of-at-least-32-characters",
  });
  const knowledge = await createKnowledge();
  const sink = createResultSink({ record: records.record });
  const sunk = new Map<string, { promise: Promise<void>; resolve: () => void }>();
  const sinking = (id: string) => {
    let entry = sunk.get(id);
    if (!entry) {
      let resolve = () => {};
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      entry = { promise, resolve };
      sunk.set(id, entry);
    }
    return entry;
  };
  const app = await buildApp(
    {
      config,
      diagnoser,
      redis,
      records,
      staff,
      knowledge,
      ...(enqueueAnswer ? { enqueueAnswer } : {}),
      ...(enqueueForget ? { enqueueForget } : {}),
      resultSink: (result, submission) =>
        sink(result, submission).finally(() => sinking(result.request_id).resolve()),
    },
    { logger, rateLimitKeyPrefix: `${prefix}rl`, keyPrefix: prefix },
  );
  await app.ready();
  return {
    app,
    redis,
    records,
    staff,
    logs: lines,
    async recorded(requestId) {
      await sinking(requestId).promise;
      return records.store.get(requestId);
    },
    async addStaff(username, password, role = "officer") {
      await staff.put({
        username,
        name: username,
        role,
        passwordHash: await hashPassword(password),
        disabled: false,
        createdAt: new Date().toISOString(),
        version: 1,
      });
    },
    async close() {
      await app.close();
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      await redis.quit();
    },
  };
}

/** A browser's view of the console through inject(): a cookie jar and the CSRF token of the last page. */
export class Visitor {
  private cookies = new Map<string, string>();
  csrf = "";
  /** `remoteAddress`: where this visitor's requests come from (127.0.0.1 unless a test needs another). */
  constructor(
    private readonly app: FastifyInstance,
    private readonly remoteAddress = "127.0.0.1",
  ) {}

  private remember(res: LightMyRequestResponse) {
    for (const c of res.cookies) {
      if (c.value === "" || (c.expires && c.expires.getTime() < Date.now())) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
    const token = /name="_csrf" value="([^"]+)"/.exec(res.body)?.[1];
    if (token) this.csrf = token;
  }

  get cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  async get(url: string) {
    const res = await this.app.inject({
      method: "GET",
      url,
      headers: { cookie: this.cookieHeader },
      remoteAddress: this.remoteAddress,
    });
    this.remember(res);
    return res;
  }

  async post(url: string, form: Record<string, string>, { csrf = true } = {}) {
    const body = new URLSearchParams({ ...form, ...(csrf ? { _csrf: this.csrf } : {}) }).toString();
    const res = await this.app.inject({
      method: "POST",
      url,
      payload: body,
      headers: { cookie: this.cookieHeader, "content-type": "application/x-www-form-urlencoded" },
      remoteAddress: this.remoteAddress,
    });
    this.remember(res);
    return res;
  }

  /** A multipart form (the diagnose form) with this visitor's cookies; its fields carry `_csrf` when it should. */
  async postMultipart(
    url: string,
    fields: Record<string, string>,
    file: Parameters<typeof multipartBody>[1],
  ) {
    const { payload, headers } = await multipartBody(fields, file);
    const res = await this.app.inject({
      method: "POST",
      url,
      payload,
      headers: { ...headers, cookie: this.cookieHeader },
      remoteAddress: this.remoteAddress,
    });
    this.remember(res);
    return res;
  }

  async signIn(username: string, password: string) {
    await this.get("/console/sign-in");
    return this.post("/console/sign-in", { username, password });
  }
}
