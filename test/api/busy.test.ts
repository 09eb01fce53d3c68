import { once } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { BusyError, ImageError } from "../../src/diagnosis/diagnoser.js";
import { BUSY_RETRY_SECONDS, createPool } from "../../src/diagnosis/model/pool.js";
import { createUploadTurns } from "../../src/routes/upload-turns.js";
import { testApp } from "./support/app.js";
import { multipartBody } from "./support/form.js";
import type { StubDiagnoser } from "./support/stub-diagnoser.js";

// A full inference queue is a moment of overload, not a fault: the client is told when to come back.
describe("a full inference queue", () => {
  it("makes the pool reject the overflow with BusyError, and still run what it queued", async () => {
    const pool = createPool({ modelPath: null, threads: 1, maxQueue: 1 });
    try {
      // Not a HEIF file: every task that reaches the worker ends in ImageError, so each outcome says who answered.
      const garbage = new Uint8Array(64).fill(7);
      const outcomes = await Promise.allSettled(Array.from({ length: 8 }, () => pool.decodeHeif(garbage)));
      const reasons = outcomes.map((o) => (o.status === "rejected" ? o.reason : o.value));
      const busy = reasons.filter((r) => r instanceof BusyError);
      const ran = reasons.filter((r) => r instanceof ImageError);
      expect(busy.length + ran.length).toBe(8);
      expect(busy.length).toBeGreaterThan(0);
      expect(ran.length).toBeGreaterThan(0);
      expect((busy[0] as BusyError).retryAfterSeconds).toBe(BUSY_RETRY_SECONDS);
      // Once the queue has drained, the pool takes work again.
      await expect(pool.decodeHeif(garbage)).rejects.toBeInstanceOf(ImageError);
    } finally {
      await pool.close();
    }
  });

  it("answers 503 with Retry-After, the rate limit headers and {detail, request_id}", async () => {
    const { app, diagnoser } = await testApp();
    diagnoser.failWith = new BusyError(7);
    try {
      const { payload, headers } = await multipartBody({}, { data: Buffer.from([0xff, 0xd8, 0xff, 0xe0]) });
      const res = await app.inject({ method: "POST", url: "/diagnosis/", payload, headers });
      expect(res.statusCode).toBe(503);
      expect(res.headers["retry-after"]).toBe("7");
      expect(res.headers["x-ratelimit-limit"]).toBe("30");
      expect(res.json()).toEqual({
        detail: "The service is busy: retry in 7 seconds",
        request_id: res.headers["x-request-id"],
      });
    } finally {
      await app.close();
    }
  });
});

/** Holds the first diagnosis (its upload keeps its turn) until `release`; `firstStarted` resolves as it begins. */
function holdFirstDiagnosis(diagnoser: StubDiagnoser) {
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let started: () => void = () => {};
  const firstStarted = new Promise<void>((resolve) => {
    started = resolve;
  });
  const original = diagnoser.diagnose.bind(diagnoser);
  let first = true;
  diagnoser.diagnose = async (...args) => {
    if (first) {
      first = false;
      started();
      await held;
    }
    return original(...args);
  };
  return { firstStarted, release };
}

describe("upload turns", () => {
  it("let UPLOADS_IN_FLIGHT photos in at once and refuse the next with 503 when no one may wait", async () => {
    const { app, diagnoser } = await testApp({ env: { UPLOADS_IN_FLIGHT: "1", UPLOADS_WAITING: "0" } });
    const base = await app.listen({ port: 0, host: "127.0.0.1" });
    const { firstStarted, release } = holdFirstDiagnosis(diagnoser);
    try {
      const { payload, headers } = await multipartBody({}, { data: Buffer.from([0xff, 0xd8, 0xff, 0xe0]) });
      const send = () => fetch(`${base}/diagnosis/`, { method: "POST", body: payload, headers });
      const first = send();
      await firstStarted;
      const second = await send();
      expect(second.status).toBe(503);
      expect(second.headers.get("retry-after")).toBe(String(BUSY_RETRY_SECONDS));
      expect(await second.json()).toEqual({
        detail: `The service is busy: retry in ${BUSY_RETRY_SECONDS} seconds`,
        request_id: second.headers.get("x-request-id"),
      });
      expect(diagnoser.calls).toHaveLength(0);
      release();
      expect((await first).status).toBe(200);
      // The turn is given back with the answer.
      expect((await send()).status).toBe(200);
    } finally {
      await app.close();
    }
  });

  it("hand a freed turn to the longest waiter, and send one that waited too long away", async () => {
    const turns = createUploadTurns({ inFlight: 1, waiting: 2, maxWaitMs: 200 });
    const end = await turns.take();
    const second = turns.take();
    const third = turns.take();
    await expect(turns.take()).rejects.toBeInstanceOf(BusyError);
    expect(turns.waiting).toBe(2);
    end();
    const endSecond = await second;
    expect(turns.active).toBe(1);
    await expect(third).rejects.toBeInstanceOf(BusyError);
    endSecond();
    endSecond();
    expect(turns.active).toBe(0);
  });

  it("let a waiter who left go without a turn, and refuse one who left before asking", async () => {
    const turns = createUploadTurns({ inFlight: 1, waiting: 2, maxWaitMs: 60_000 });
    const end = await turns.take();
    const client = new AbortController();
    const leaving = turns.take(client.signal);
    const staying = turns.take();
    expect(turns.waiting).toBe(2);
    client.abort(new Error("the client left"));
    await expect(leaving).rejects.toThrow("the client left");
    expect(turns.waiting).toBe(1);
    end();
    const endStaying = await staying;
    expect(turns.active).toBe(1);
    endStaying();
    expect(turns.active).toBe(0);
    await expect(turns.take(AbortSignal.abort(new Error("already gone")))).rejects.toThrow("already gone");
    expect(turns.active).toBe(0);
  });

  it("give the turn of a client who hung up while waiting to the next upload", async () => {
    const { app, diagnoser } = await testApp({ env: { UPLOADS_IN_FLIGHT: "1", UPLOADS_WAITING: "1" } });
    const base = await app.listen({ port: 0, host: "127.0.0.1" });
    const { firstStarted, release } = holdFirstDiagnosis(diagnoser);
    try {
      const { payload, headers } = await multipartBody({}, { data: Buffer.from([0xff, 0xd8, 0xff, 0xe0]) });
      const send = () => fetch(`${base}/diagnosis/`, { method: "POST", body: payload, headers });
      const holder = send();
      await firstStarted;
      // A client that sends its headers, waits in the line for the turn, and hangs up there.
      const arrived = once(app.server, "request") as Promise<[IncomingMessage, ServerResponse]>;
      const { port } = new URL(base);
      const leaver = connect(Number(port), "127.0.0.1", () =>
        leaver.write(
          `POST /diagnosis/ HTTP/1.1\r\nHost: x\r\nContent-Type: ${headers["content-type"]}\r\n` +
            `Content-Length: ${payload.length}\r\n\r\n`,
        ),
      );
      const [, leaverResponse] = await arrived;
      // The line (one place) is full: the leaver is in it.
      expect((await send()).status).toBe(503);
      const leftServer = once(leaverResponse, "close");
      leaver.destroy();
      await leftServer;
      release();
      expect((await holder).status).toBe(200);
      // The freed turn went to no one who left: the next upload is answered, not sent away after the wait.
      expect((await send()).status).toBe(200);
    } finally {
      await app.close();
    }
  });
});
