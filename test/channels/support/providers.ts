// Loopback stand-ins for the providers' HTTP APIs (Twilio REST, Telegram Bot API, Africa's Talking SMS),
// plus the media they host. Each adapter is pointed here by its API root (TWILIO_API_ROOT, TELEGRAM_API_ROOT,
// AT_API_ROOT), as a staging deployment would be.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface Recorded {
  method: string;
  path: string;
  /** When the request arrived (Date.now()). */
  at: number;
  headers: IncomingMessage["headers"];
  /** Form fields or JSON body, as an object. */
  body: Record<string, unknown>;
  /** Set when the stand-in answered with an error on purpose (see failNext). */
  failedWith?: number;
}

export interface ProviderStandIn {
  baseUrl: string;
  requests: Recorded[];
  /**
   * Served at GET /2010-04-01/Accounts/<sid>/Messages/<sid>/Media/<name> (Twilio's media URLs; /media/<name>
   * too) and /file/bot<token>/photos/<name> (Telegram files).
   */
  media: Map<string, Buffer>;
  /**
   * Answers the next `count` sends of a provider with an HTTP error, after letting `skip` through. A 429 names
   * its wait as the provider does: Telegram's `parameters.retry_after`, a Retry-After header for Twilio and
   * Africa's Talking.
   */
  failNext(
    provider: "twilio" | "telegram" | "africastalking",
    count: number,
    status?: number,
    retryAfterSeconds?: number,
    skip?: number,
  ): void;
  /** Answers the next `count` downloads of one media item with an HTTP error (429 with Retry-After). */
  failMedia(name: string, count: number, status: number, retryAfterSeconds?: number): void;
  /** Keeps downloads of one media item waiting until the returned function is called: a job stuck mid-way. */
  holdMedia(name: string): () => void;
  sends(provider: "twilio" | "telegram" | "africastalking"): Recorded[];
  waitForSends(
    provider: "twilio" | "telegram" | "africastalking",
    count: number,
    timeoutMs?: number,
  ): Promise<Recorded[]>;
  close(): Promise<void>;
}

const SEND_PATHS = {
  twilio: /\/Messages\.json$/,
  telegram: /\/sendMessage$/,
  africastalking: /^\/version1\/messaging$/,
} as const;

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString("utf8");
  if (!raw) return {};
  if ((req.headers["content-type"] ?? "").includes("json")) return JSON.parse(raw) as Record<string, unknown>;
  return Object.fromEntries(new URLSearchParams(raw));
}

export async function startProviderStandIn(): Promise<ProviderStandIn> {
  const requests: Recorded[] = [];
  const media = new Map<string, Buffer>();
  type Failure = { count: number; status: number; retryAfterSeconds: number; skip?: number };
  const failing: Record<keyof typeof SEND_PATHS, Failure> = {
    twilio: { count: 0, status: 429, retryAfterSeconds: 1 },
    telegram: { count: 0, status: 429, retryAfterSeconds: 1 },
    africastalking: { count: 0, status: 429, retryAfterSeconds: 1 },
  };
  const failingMedia = new Map<string, Failure>();
  const held = new Map<string, Promise<void>>();
  let nextId = 1;

  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const body = await readBody(req);
    const record: Recorded = {
      method: req.method ?? "GET",
      path: url.pathname,
      at: Date.now(),
      headers: req.headers,
      body,
    };
    const json = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(payload));
    };

    const mediaName =
      url.pathname.match(/^\/media\/(.+)$/)?.[1] ??
      url.pathname.match(/^\/2010-04-01\/Accounts\/[^/]+\/Messages\/[^/]+\/Media\/(.+)$/)?.[1] ??
      url.pathname.match(/^\/file\/bot[^/]+\/photos\/(.+)$/)?.[1];
    if (req.method === "GET" && mediaName) {
      requests.push(record);
      await held.get(mediaName);
      const failure = failingMedia.get(mediaName);
      if (failure && failure.count > 0) {
        failure.count -= 1;
        record.failedWith = failure.status;
        const retryAfter: Record<string, string> =
          failure.status === 429 ? { "retry-after": String(failure.retryAfterSeconds) } : {};
        return json(failure.status, { message: "refused" }, retryAfter);
      }
      const bytes = media.get(mediaName);
      if (!bytes) return json(404, { message: "not found" });
      res.writeHead(200, { "content-type": "image/jpeg", "content-length": bytes.length }).end(bytes);
      return;
    }
    requests.push(record);
    for (const provider of ["twilio", "telegram", "africastalking"] as const) {
      const failure = failing[provider];
      if (!SEND_PATHS[provider].test(url.pathname)) continue;
      if (failure.skip) failure.skip -= 1;
      else if (failure.count > 0) {
        failure.count -= 1;
        const { status, retryAfterSeconds } = failure;
        record.failedWith = status;
        if (provider === "telegram") {
          const description =
            status === 429
              ? `Too Many Requests: retry after ${retryAfterSeconds}`
              : "Forbidden: bot was blocked by the user";
          return json(status, {
            ok: false,
            error_code: status,
            description,
            ...(status === 429 ? { parameters: { retry_after: retryAfterSeconds } } : {}),
          });
        }
        const retryAfter: Record<string, string> =
          status === 429 ? { "retry-after": String(retryAfterSeconds) } : {};
        if (provider === "africastalking") return json(status, { message: "Too many requests" }, retryAfter);
        return json(
          status,
          { code: status === 429 ? 20429 : 21211, message: "refused", more_info: "", status },
          retryAfter,
        );
      }
    }
    if (SEND_PATHS.twilio.test(url.pathname)) {
      return json(201, {
        sid: `SM${String(nextId++).padStart(32, "0")}`,
        status: "queued",
        to: body.To,
        from: body.From,
        body: body.Body,
      });
    }
    if (SEND_PATHS.africastalking.test(url.pathname)) {
      return json(201, {
        SMSMessageData: {
          Message: "Sent to 1/1 Total Cost: KES 0.8000",
          Recipients: [
            {
              statusCode: 101,
              number: body.to,
              status: "Success",
              cost: "KES 0.8000",
              messageId: `ATXid_${nextId++}`,
            },
          ],
        },
      });
    }
    const method = url.pathname.match(/^\/bot[^/]+\/(\w+)$/)?.[1];
    if (method === "sendMessage") {
      return json(200, {
        ok: true,
        result: {
          message_id: nextId++,
          date: 0,
          chat: { id: Number(body.chat_id), type: "private" },
          text: body.text,
        },
      });
    }
    if (method === "getFile") {
      const fileId = String(body.file_id);
      // The Bot API serves files up to 20 MB: a bigger one "sent as a file" is refused, in these words.
      if (fileId.startsWith("over-20-mb"))
        return json(400, { ok: false, error_code: 400, description: "Bad Request: file is too big" });
      const bytes = media.get(fileId);
      if (!bytes)
        return json(400, { ok: false, error_code: 400, description: "Bad Request: invalid file_id" });
      return json(200, {
        ok: true,
        result: {
          file_id: fileId,
          file_unique_id: fileId,
          file_size: bytes.length,
          file_path: `photos/${fileId}`,
        },
      });
    }
    if (method === "answerCallbackQuery" || method === "sendChatAction")
      return json(200, { ok: true, result: true });
    json(404, { message: `no stand-in for ${req.method} ${url.pathname}` });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const sends = (provider: keyof typeof SEND_PATHS) =>
    requests.filter((r) => SEND_PATHS[provider].test(r.path));
  return {
    baseUrl,
    requests,
    media,
    failNext: (provider, count, status = 429, retryAfterSeconds = 1, skip = 0) => {
      failing[provider] = { count, status, retryAfterSeconds, skip };
    },
    failMedia: (name, count, status, retryAfterSeconds = 1) => {
      failingMedia.set(name, { count, status, retryAfterSeconds });
    },
    holdMedia(name) {
      let release = () => {};
      held.set(
        name,
        new Promise<void>((resolve) => {
          release = resolve;
        }),
      );
      return () => {
        held.delete(name);
        release();
      };
    },
    sends,
    async waitForSends(provider, count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (sends(provider).length < count) {
        if (Date.now() > deadline)
          throw new Error(`expected ${count} ${provider} sends, saw ${sends(provider).length}`);
        await new Promise((r) => setTimeout(r, 25));
      }
      return sends(provider);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
