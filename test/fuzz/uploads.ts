/**
 * Seeded malformed uploads for POST /diagnosis/, sent over a real socket, and the rule every answer must keep:
 * no 5xx other than a 503 with Retry-After, an answer within a bound, `{detail, request_id}` (or a result)
 * with the same X-Request-ID. test/api/fuzz.test.ts runs a few hundred; `npm run fuzz` runs thousands.
 */
import { connect } from "node:net";
import { parseResponse, type RawResponse } from "../api/support/raw-http.js";
import { seededRandom } from "../support/random.js";

export interface FuzzCase {
  name: string;
  /** The whole request as written to the socket: request line, headers and body. */
  request: Buffer;
}

export interface Seeds {
  /** Real, small photos: mutations of them reach the decoders. */
  images: Buffer[];
}

const CRLF = "\r\n";

function part(boundary: string, headers: string[], data: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(`--${boundary}${CRLF}${headers.join(CRLF)}${CRLF}${CRLF}`),
    data,
    Buffer.from(CRLF),
  ]);
}

function request(body: Buffer, contentType: string | null, extra: string[] = []): Buffer {
  const headers = [
    "POST /diagnosis/ HTTP/1.1",
    "Host: 127.0.0.1",
    "Connection: close",
    `Content-Length: ${body.length}`,
    ...(contentType === null ? [] : [`Content-Type: ${contentType}`]),
    ...extra,
  ];
  return Buffer.concat([Buffer.from(headers.join(CRLF) + CRLF + CRLF), body]);
}

/** One case: a well-formed form, then one or two of the mutations below. */
export function makeCase(seed: number, seeds: Seeds): FuzzCase {
  const rnd = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)]!;
  const int = (max: number) => Math.floor(rnd() * max);
  const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => int(256)));
  const boundary = `fz${seed.toString(36)}${"-".repeat(int(20))}`;
  let image = pick(seeds.images);
  const names: string[] = [];

  // The image itself, mutated half of the time: the decoders must refuse or read it, never crash.
  if (rnd() < 0.5) {
    const copy = Buffer.from(image);
    const how = int(4);
    if (how === 0) image = copy.subarray(0, int(copy.length));
    else if (how === 1) {
      for (let i = 0; i < 1 + int(40); i++) copy[int(copy.length)] = int(256);
      image = copy;
    } else if (how === 2) image = Buffer.concat([copy.subarray(0, 12 + int(40)), bytes(int(4000))]);
    else image = bytes(int(70_000));
    names.push(["truncated image", "flipped bytes", "image header + noise", "random bytes"][how]!);
  }
  const disposition = `Content-Disposition: form-data; name="image"; filename="${pick(["a.jpg", "IMG.HEIC", "", "x\u00e9.png"])}"`;
  const parts: Buffer[] = [part(boundary, [disposition, "Content-Type: image/jpeg"], image)];
  const fields: [string, string][] = [
    ["language", pick(["en", "sw", "xx", "", "fr".repeat(50)])],
    ["detail_level", pick(["simple", "expert", "max"])],
    ["include_bbox", pick(["true", "false", "yes", "1"])],
    [
      "user_data",
      pick(['{"channel":"sms","phone":"+254712345678"}', "[1,2]", "{", '{"phone":"12"}', "x".repeat(5000)]),
    ],
    ["crop_type", pick(["tomato", "ROCK", "\u0000", "t".repeat(100)])],
  ];
  for (const [name, value] of fields) {
    if (rnd() < 0.5)
      parts.push(part(boundary, [`Content-Disposition: form-data; name="${name}"`], Buffer.from(value)));
  }

  // Structural mutations of the multipart body.
  const mutation = int(12);
  let contentType: string | null = `multipart/form-data; boundary=${boundary}`;
  let body = Buffer.concat([...parts, Buffer.from(`--${boundary}--${CRLF}`)]);
  switch (mutation) {
    case 0:
      names.push("part without Content-Disposition");
      body = Buffer.concat([part(boundary, ["Content-Type: image/jpeg"], bytes(int(70_000))), body]);
      break;
    case 1:
      names.push("truncated body");
      body = body.subarray(0, int(body.length));
      break;
    case 2:
      names.push("no closing delimiter");
      body = Buffer.concat(parts);
      break;
    case 3:
      names.push("wrong boundary");
      contentType = `multipart/form-data; boundary=${boundary}x`;
      break;
    case 4:
      names.push(pick(["no content type", "json content type", "form without boundary", "multipart/mixed"]));
      contentType = pick([
        null,
        "application/json",
        "multipart/form-data",
        `multipart/mixed; boundary=${boundary}`,
      ]);
      break;
    case 5:
      names.push("two images");
      body = Buffer.concat([part(boundary, [disposition], image), body]);
      break;
    case 6:
      names.push("many fields");
      body = Buffer.concat([
        ...Array.from({ length: 15 + int(30) }, (_, i) =>
          part(boundary, [`Content-Disposition: form-data; name="f${i}"`], Buffer.from("v")),
        ),
        body,
      ]);
      break;
    case 7:
      names.push("garbled part header");
      body = Buffer.concat([
        part(boundary, [`Content-Disposition: ${bytes(int(60)).toString("latin1")}`], bytes(int(2000))),
        body,
      ]);
      break;
    case 8:
      names.push("bytes flipped in the body");
      body = Buffer.from(body);
      for (let i = 0; i < 1 + int(10); i++) body[int(body.length)] = int(256);
      break;
    case 9:
      names.push("header lines without CRLF");
      body = Buffer.from(
        body.toString("latin1").replace(/\r\n/g, () => (rnd() < 0.2 ? "\n" : "\r\n")),
        "latin1",
      );
      break;
    default:
      names.push("well-formed");
  }
  const extra = rnd() < 0.1 ? [`X-API-Key: ${pick(["", "wrong", "k".repeat(200)])}`] : [];
  return { name: `#${seed}: ${names.join(", ")}`, request: request(body, contentType, extra) };
}

/** Sends one case on a fresh connection and waits for the answer, at most `boundMs`. */
export function send(port: number, fuzz: FuzzCase, boundMs: number): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const chunks: Buffer[] = [];
    // Written, not ended: Node's server aborts a request whose client half-closes. Content-Length always
    // matches what is sent, so nothing leaves the server waiting for more.
    const socket = connect(port, "127.0.0.1", () => socket.write(fuzz.request));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`${fuzz.name}: no answer within ${boundMs} ms`));
    }, boundMs);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", () => {});
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(parseResponse(Buffer.concat(chunks).toString("utf8"), performance.now() - started));
    });
  });
}

/** What is wrong with an answer, or undefined when it keeps the contract. */
export function violation(res: RawResponse): string | undefined {
  if (res.status === 0) return "the connection closed without an answer";
  if (res.status >= 500 && !(res.status === 503 && res.headers["retry-after"])) return `status ${res.status}`;
  let body: { detail?: unknown; request_id?: unknown };
  try {
    body = JSON.parse(res.body);
  } catch {
    return `status ${res.status} with a body that is not JSON: ${res.body.slice(0, 80)}`;
  }
  if (typeof body.request_id !== "string" || body.request_id !== res.headers["x-request-id"])
    return `status ${res.status} without a request_id equal to X-Request-ID`;
  if (res.status !== 200 && body.detail === undefined) return `status ${res.status} without detail`;
  return undefined;
}

export interface FuzzReport {
  cases: number;
  statuses: Record<number, number>;
  slowestMs: number;
  failures: string[];
}

/** Runs `count` cases from `firstSeed` on, `concurrency` at a time. */
export async function fuzz(
  port: number,
  options: { count: number; firstSeed: number; concurrency: number; boundMs: number; seeds: Seeds },
): Promise<FuzzReport> {
  const report: FuzzReport = { cases: 0, statuses: {}, slowestMs: 0, failures: [] };
  let next = options.firstSeed;
  const end = options.firstSeed + options.count;
  const lane = async () => {
    while (next < end) {
      const fuzzCase = makeCase(next++, options.seeds);
      try {
        const res = await send(port, fuzzCase, options.boundMs);
        report.statuses[res.status] = (report.statuses[res.status] ?? 0) + 1;
        report.slowestMs = Math.max(report.slowestMs, res.ms);
        const problem = violation(res);
        if (problem) report.failures.push(`${fuzzCase.name}: ${problem}`);
      } catch (error) {
        report.failures.push((error as Error).message);
      }
      report.cases++;
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, lane));
  return report;
}
