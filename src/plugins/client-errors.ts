import { randomUUID } from "node:crypto";
import { maxHeaderSize, STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { FastifyBaseLogger, FastifyPluginAsync, FastifyReply } from "fastify";
import fp from "fastify-plugin";

/**
 * Errors Node's HTTP server raises on a connection before, or instead of, a Fastify request: a malformed
 * request line, headers over Node's limit, a request that did not arrive within REQUEST_TIMEOUT_MS, a
 * connection silent for IDLE_TIMEOUT_MS. They get the API's error shape, `{detail, request_id}` with
 * `X-Request-ID`, and one log line, instead of Fastify's `{error, message, statusCode}`.
 */
export interface ClientErrorOptions {
  requestTimeoutMs: number;
  idleTimeoutMs: number;
}

/**
 * The request a connection is serving, so a timeout answers with (and logs) that request's id, and with the
 * rate limit headers its onRequest hook set (the spec wants them on every response).
 */
const inFlight = new WeakMap<Socket, { id: string; reply: FastifyReply }>();

function rateLimitHeaders(reply: FastifyReply | undefined): string {
  const headers = Object.entries(reply?.getHeaders() ?? {}).filter(([name]) => /^x-ratelimit-/i.test(name));
  return headers.map(([name, value]) => `${name}: ${String(value)}\r\n`).join("");
}

function answer(socket: Socket, status: number, detail: string, requestId: string): void {
  const reply = inFlight.get(socket)?.reply;
  if (socket.writable && !reply?.raw.headersSent) {
    const body = JSON.stringify({ detail, request_id: requestId });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-ID: ${requestId}\r\n${rateLimitHeaders(reply)}` +
        `Connection: close\r\n\r\n${body}`,
      () => socket.destroy(),
    );
  } else socket.destroy();
}

function describe(code: string | undefined, options: ClientErrorOptions): { status: number; detail: string } {
  if (code === "ERR_HTTP_REQUEST_TIMEOUT")
    return {
      status: 408,
      detail: `The request did not arrive in full within ${options.requestTimeoutMs / 1000} seconds`,
    };
  if (code === "HPE_HEADER_OVERFLOW")
    return { status: 431, detail: `The request headers are larger than ${maxHeaderSize / 1024} KB` };
  return { status: 400, detail: `Malformed HTTP request${code ? ` (${code})` : ""}` };
}

/** Fastify's `clientErrorHandler`; `logger` is read when an error comes, once the app exists. */
export function clientErrorHandler(logger: () => FastifyBaseLogger, options: ClientErrorOptions) {
  return (error: Error & { code?: string }, socket: Socket): void => {
    // A client that hung up has nothing left to hear.
    if (error.code === "ECONNRESET" || socket.destroyed) return;
    const { status, detail } = describe(error.code, options);
    const requestId = inFlight.get(socket)?.id ?? randomUUID();
    logger().info({ request_id: requestId, statusCode: status, code: error.code, detail }, "client error");
    answer(socket, status, detail, requestId);
  };
}

/**
 * Tracks the request each connection serves, and keeps the idle timeout to the client's turns: it runs while
 * the request arrives, and is off while the service works on it (a queued photo may wait several seconds,
 * which is not the client's silence). After the answer Node's keep-alive timeout takes over.
 */
const clientErrors: FastifyPluginAsync<ClientErrorOptions> = async (app, options) => {
  app.addHook("onRequest", async (request, reply) => {
    const socket = request.raw.socket as Socket | undefined;
    // inject() has no real connection.
    if (!socket || typeof socket.setTimeout !== "function") return;
    inFlight.set(socket, { id: request.id, reply });
    socket.setTimeout(options.idleTimeoutMs);
    // With a listener here Node leaves a half-received request's socket to us instead of destroying it.
    request.raw.once("timeout", () => {
      const detail = `The request body stalled for ${options.idleTimeoutMs / 1000} seconds`;
      request.log.info({ statusCode: 408, detail }, "client error");
      answer(socket, 408, detail, request.id);
    });
  });
  app.addHook("preHandler", async (request) => {
    request.raw.socket?.setTimeout?.(0);
  });
  app.addHook("onResponse", async (request) => {
    const socket = request.raw.socket as Socket | undefined;
    if (socket && inFlight.get(socket)?.id === request.id) inFlight.delete(socket);
  });
};

export default fp(clientErrors, { name: "client-errors", fastify: "5.x" });
