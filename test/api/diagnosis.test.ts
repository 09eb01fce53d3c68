import { createHash } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ImageError } from "../../src/diagnosis/diagnoser.js";
import type { DiagnosisResult, Language } from "../../src/diagnosis/types.js";
import type { Routing } from "../../src/results/types.js";
import { capturedLogger, testApp } from "./support/app.js";
import { multipartBody } from "./support/form.js";
import type { StubDiagnoser } from "./support/stub-diagnoser.js";

const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);
// Every test here uses its own client IP so the 30/min limit never interferes.
let ip = 0;
const nextIp = () => `10.1.${Math.floor(++ip / 250)}.${ip % 250}`;

/** A partner's key: only a caller with one may have a result sent to a farmer (user_data routing keys). */
const PARTNER_KEY = "partner-key-0123456789abcdef";
const PARTNER = { "x-api-key": PARTNER_KEY };
const env = { API_KEYS: `partner:${createHash("sha256").update(PARTNER_KEY).digest("hex")}:1000` };

let app: FastifyInstance;
let diagnoser: StubDiagnoser;
const sunk: { result: DiagnosisResult; language: Language; routing: Routing | undefined }[] = [];

beforeAll(async () => {
  ({ app, diagnoser } = await testApp({
    env,
    deps: {
      resultSink: async (result, { language, routing }) => {
        sunk.push({ result, language, routing });
      },
    },
  }));
});
afterAll(() => app.close());

/** The sink runs after the answer, once the photo is prepared for keeping: wait for its call for a request. */
async function sunkFor(res: { json(): { request_id: string } }) {
  const id = res.json().request_id;
  const find = () => sunk.find((s) => s.result.request_id === id);
  for (let i = 0; i < 400 && !find(); i++) await new Promise((r) => setTimeout(r, 5));
  return find()!;
}

async function post(
  fields: Record<string, string>,
  file: Parameters<typeof multipartBody>[1] | null = { data: JPEG },
  url = "/diagnosis/",
  extraHeaders: Record<string, string> = {},
) {
  const { payload, headers } = await multipartBody(fields, file ?? undefined);
  return app.inject({
    method: "POST",
    url,
    payload,
    headers: { ...headers, ...extraHeaders },
    remoteAddress: nextIp(),
  });
}

function problems(body: string) {
  const parsed = JSON.parse(body) as {
    detail: { loc: string[]; msg: string; type: string }[];
    request_id: string;
  };
  return parsed.detail;
}

describe("POST /diagnosis/ success", () => {
  it.each(["/diagnosis/", "/diagnosis", "/diagnoses/", "/diagnoses"])("answers 200 on %s", async (url) => {
    const res = await post({}, undefined, url);
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
  });

  it("returns the full result with X-Request-ID equal to request_id", async () => {
    const res = await post({});
    const body = res.json();
    expect(body.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers["x-request-id"]).toBe(body.request_id);
    expect(diagnoser.calls.at(-1)?.requestId).toBe(body.request_id);
    expect(body.image_analysis).toEqual({ is_plant: true, quality_issue: null, detected_crop: "tomato" });
    expect(body.is_plant).toBe(true);
    expect(body.crop_health).toBe("unhealthy");
    expect(body.treatment.urgency).toBe("high");
    expect(body.diagnoses[0]).toMatchObject({ eppo_code: "PHYTIN", category: "oomycete", urgency: "high" });
    expect(body).toHaveProperty("additional_notes", null);
    expect(body).toHaveProperty("error", null);
  });

  it("passes the image bytes and the defaults (fr, standard, no boxes) with the image alone", async () => {
    const res = await post({});
    expect(res.statusCode).toBe(200);
    const call = diagnoser.calls.at(-1)!;
    expect(call.image.equals(JPEG)).toBe(true);
    expect(call.context).toEqual({
      cropType: undefined,
      region: undefined,
      growthStage: undefined,
      description: undefined,
      language: "fr",
      detailLevel: "standard",
      includeBbox: false,
    });
    expect(res.json().detections).toBeNull();
  });

  it("passes every optional field through", async () => {
    const res = await post({
      crop_type: "tomato",
      region: "Kenya",
      growth_stage: "flowering",
      description: "brown spots",
      language: "sw",
      detail_level: "expert",
      include_bbox: "true",
    });
    expect(res.statusCode).toBe(200);
    expect(diagnoser.calls.at(-1)!.context).toEqual({
      cropType: "tomato",
      region: "Kenya",
      growthStage: "flowering",
      description: "brown spots",
      language: "sw",
      detailLevel: "expert",
      includeBbox: true,
    });
    expect(res.json().detections).toEqual([
      { name: "late_blight", bbox: [0.1, 0.2, 0.3, 0.4], confidence: 0.8 },
    ]);
  });

  it.each(["en", "fr", "sw", "es", "pt", "it"])("accepts language %s", async (language) => {
    expect((await post({ language })).statusCode).toBe(200);
  });

  it.each(["simple", "standard", "expert"])("accepts detail_level %s", async (level) => {
    expect((await post({ detail_level: level })).statusCode).toBe(200);
  });

  it("treats include_bbox=false as false and empty text fields as not sent", async () => {
    const res = await post({ include_bbox: "false", language: "", crop_type: "" });
    expect(res.statusCode).toBe(200);
    expect(diagnoser.calls.at(-1)!.context).toMatchObject({
      includeBbox: false,
      language: "fr",
      cropType: undefined,
    });
  });

  it.each([
    ["True", true],
    ["TRUE", true],
    ["1", true],
    ["yes", true],
    ["on", true],
    [" t ", true],
    ["False", false],
    ["0", false],
    ["no", false],
    ["OFF", false],
  ])("reads include_bbox=%j as FastAPI does (%s)", async (value, expected) => {
    const res = await post({ include_bbox: value });
    expect(res.statusCode).toBe(200);
    expect(diagnoser.calls.at(-1)!.context.includeBbox).toBe(expected);
  });

  it("ignores the declared file name and type (the core sniffs the bytes)", async () => {
    const res = await post({}, { data: JPEG, filename: "x.txt", type: "text/plain" });
    expect(res.statusCode).toBe(200);
  });

  it("hands the result, language and routing to the result sink", async () => {
    const res = await post(
      { language: "en", user_data: JSON.stringify({ channel: "sms", phone: "+254712345678", device: "x" }) },
      undefined,
      "/diagnosis/",
      PARTNER,
    );
    expect(res.statusCode).toBe(200);
    const last = await sunkFor(res);
    expect(last.result.request_id).toBe(res.json().request_id);
    expect(last.language).toBe("en");
    expect(last.routing).toEqual({ channel: "sms", phone: "+254712345678" });
  });

  it("routes telegram by chat_id (number or string) and passes no routing without a channel", async () => {
    const telegram = await post(
      { user_data: JSON.stringify({ channel: "telegram", chat_id: -1001234567 }) },
      undefined,
      "/diagnosis/",
      PARTNER,
    );
    expect((await sunkFor(telegram)).routing).toEqual({ channel: "telegram", chatId: "-1001234567" });
    const none = await post({ user_data: JSON.stringify({ device: "android", phone: "+33612345678" }) });
    expect((await sunkFor(none)).routing).toBeUndefined();
  });

  it("accepts user_data sent as an application/json part (parsed by the parser, validated the same)", async () => {
    const boundary = "----test-boundary";
    const payload = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="a.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`,
      ),
      JPEG,
      Buffer.from(
        `\r\n--${boundary}\r\nContent-Disposition: form-data; name="user_data"\r\nContent-Type: application/json\r\n\r\n` +
          `{"channel":"whatsapp","phone":"+254712345678"}\r\n--${boundary}--\r\n`,
      ),
    ]);
    const res = await app.inject({
      method: "POST",
      url: "/diagnosis/",
      payload,
      headers: { "content-type": `multipart/form-data; boundary=${boundary}`, ...PARTNER },
      remoteAddress: nextIp(),
    });
    expect(res.statusCode).toBe(200);
    expect((await sunkFor(res)).routing).toEqual({ channel: "whatsapp", phone: "+254712345678" });
  });

  it("refuses routing keys without an API key (401, nothing diagnosed or sent), and takes the rest of user_data", async () => {
    const calls = diagnoser.calls.length;
    const userData = JSON.stringify({ channel: "sms", phone: "+254712345678" });
    const res = await post({ user_data: userData });
    expect(res.statusCode).toBe(401);
    expect(res.headers["www-authenticate"]).toBe('Bearer realm="crop-diagnosis"');
    expect(res.json()).toEqual({
      detail:
        "Sending a result to a farmer (user_data.channel) needs an API key (X-API-Key). Without one, leave out the routing keys.",
      request_id: res.headers["x-request-id"],
    });
    expect(diagnoser.calls).toHaveLength(calls);
    expect(sunk.some((s) => s.result.request_id === res.headers["x-request-id"])).toBe(false);
    expect(
      (await post({ user_data: JSON.stringify({ device: "android", phone: "+254712345678" }) })).statusCode,
    ).toBe(200);
  });
});

describe("POST /diagnosis/ validation (422)", () => {
  it("requires the image", async () => {
    const res = await post({ language: "en" }, null);
    expect(res.statusCode).toBe(422);
    const body = res.json();
    expect(body.request_id).toBe(res.headers["x-request-id"]);
    expect(body.detail).toEqual([{ loc: ["body", "image"], msg: "Field required", type: "missing" }]);
  });

  it("requires the image to be a file part, not text", async () => {
    const res = await post({ image: "not a file" }, null);
    expect(res.statusCode).toBe(422);
    expect(problems(res.body)).toEqual([
      expect.objectContaining({ loc: ["body", "image"], type: "file_expected" }),
    ]);
  });

  it("rejects an image sent in another field name", async () => {
    const res = await post({}, { name: "photo", data: JPEG });
    expect(res.statusCode).toBe(422);
    expect(problems(res.body)[0]!.loc).toEqual(["body", "image"]);
  });

  it.each([
    ["language", "de", "enum"],
    ["language", "EN", "enum"],
    ["detail_level", "basic", "enum"],
    ["include_bbox", "maybe", "bool_parsing"],
    ["include_bbox", "2", "bool_parsing"],
    ["crop_type", "x".repeat(65), "string_too_long"],
    ["region", "x".repeat(101), "string_too_long"],
    ["growth_stage", "x".repeat(65), "string_too_long"],
    ["description", "x".repeat(2001), "string_too_long"],
    ["user_data", `{"a":"${"x".repeat(4100)}"}`, "string_too_long"],
    ["description", "x".repeat(20_000), "string_too_long"],
  ])("rejects %s=%s", async (field, value, type) => {
    const res = await post({ [field]: value });
    expect(res.statusCode).toBe(422);
    const [problem] = problems(res.body);
    expect(problem).toMatchObject({ loc: ["body", field], type });
    expect(problem!.msg).toBeTruthy();
  });

  it("lists every invalid field in one answer, once each", async () => {
    const res = await post({
      language: "de",
      detail_level: "basic",
      include_bbox: "maybe",
      region: "x".repeat(101),
    });
    expect(res.statusCode).toBe(422);
    expect(problems(res.body).map((p) => [p.loc.join("."), p.type])).toEqual([
      ["body.region", "string_too_long"],
      ["body.language", "enum"],
      ["body.detail_level", "enum"],
      ["body.include_bbox", "bool_parsing"],
    ]);
  });

  it("names the allowed values of an enum", async () => {
    const res = await post({ language: "de" });
    expect(problems(res.body)[0]!.msg).toBe("Input should be 'en', 'fr', 'sw', 'es', 'pt', 'it'");
  });

  it("counts user_data's 4 KB in bytes, not characters", async () => {
    const res = await post({ user_data: JSON.stringify({ note: "é".repeat(2100) }) });
    expect(res.statusCode).toBe(422);
    expect(problems(res.body)[0]).toMatchObject({ loc: ["body", "user_data"], type: "string_too_long" });
  });

  it.each([
    ["not json", ["body", "user_data"], "json_invalid"],
    ["[1,2]", ["body", "user_data"], "dict_type"],
    ['"text"', ["body", "user_data"], "dict_type"],
    ["null", ["body", "user_data"], "dict_type"],
    ['{"channel":"email"}', ["body", "user_data", "channel"], "enum"],
    ['{"channel":"sms"}', ["body", "user_data", "phone"], "missing"],
    ['{"channel":"whatsapp","phone":"0712345678"}', ["body", "user_data", "phone"], "phone_e164"],
    ['{"phone":"+0712"}', ["body", "user_data", "phone"], "phone_e164"],
    ['{"phone":12345678}', ["body", "user_data", "phone"], "phone_e164"],
    ['{"channel":"telegram"}', ["body", "user_data", "chat_id"], "missing"],
    ['{"channel":"telegram","chat_id":"abc"}', ["body", "user_data", "chat_id"], "chat_id"],
    ['{"channel":"telegram","chat_id":1.5}', ["body", "user_data", "chat_id"], "chat_id"],
  ])("rejects user_data %s", async (userData, loc, type) => {
    const res = await post({ user_data: userData });
    expect(res.statusCode).toBe(422);
    expect(problems(res.body)).toContainEqual(expect.objectContaining({ loc, type }));
    expect(res.json().request_id).toBe(res.headers["x-request-id"]);
  });

  it("rejects a repeated field", async () => {
    const form = new FormData();
    form.append("image", new Blob([JPEG]), "a.jpg");
    form.append("language", "en");
    form.append("language", "fr");
    const request = new Request("http://x/", { method: "POST", body: form });
    const res = await app.inject({
      method: "POST",
      url: "/diagnosis/",
      payload: Buffer.from(await request.arrayBuffer()),
      headers: { "content-type": request.headers.get("content-type")! },
      remoteAddress: nextIp(),
    });
    expect(res.statusCode).toBe(422);
    expect(problems(res.body)[0]!.loc).toEqual(["body", "language"]);
  });
});

describe("POST /diagnosis/ routed to a channel the service does not send by", () => {
  it("is refused with 422 channel_unavailable, naming the channels it does send by", async () => {
    const { app: telegramOnly, diagnoser: stub } = await testApp({
      env,
      deps: { resultSink: async () => {}, deliverable: new Set(["telegram"] as const) },
    });
    try {
      const send = async (userData: object) => {
        const { payload, headers } = await multipartBody(
          { user_data: JSON.stringify(userData) },
          { data: JPEG },
        );
        return telegramOnly.inject({
          method: "POST",
          url: "/diagnosis/",
          payload,
          headers: { ...headers, ...PARTNER },
          remoteAddress: nextIp(),
        });
      };
      const refused = await send({ channel: "sms", phone: "+254712345678" });
      expect(refused.statusCode).toBe(422);
      expect(problems(refused.body)).toEqual([
        {
          loc: ["body", "user_data", "channel"],
          msg: "This service cannot send results by sms (no provider for it, or no channel queue). It can send by telegram.",
          type: "channel_unavailable",
        },
      ]);
      expect(stub.calls).toHaveLength(0);
      expect((await send({ channel: "telegram", chat_id: 42 })).statusCode).toBe(200);
      expect((await send({ device: "feature_phone" })).statusCode).toBe(200);
    } finally {
      await telegramOnly.close();
    }
  });
});

describe("POST /diagnosis/ bad requests (400)", () => {
  const expect400 = (
    res: { statusCode: number; body: string; headers: Record<string, unknown> },
    detail: RegExp,
  ) => {
    expect(res.statusCode).toBe(400);
    const body = JSON.parse(res.body);
    expect(Object.keys(body).sort()).toEqual(["detail", "request_id"]);
    expect(body.detail).toMatch(detail);
    expect(body.request_id).toBe(res.headers["x-request-id"]);
  };

  it("rejects a JSON body", async () => {
    const res = await app.inject({
      method: "POST",
      url: "/diagnosis/",
      payload: { image: "x" },
      remoteAddress: nextIp(),
    });
    expect400(res, /multipart\/form-data/);
  });

  it("rejects a body with no content type or an unknown one", async () => {
    expect400(await app.inject({ method: "POST", url: "/diagnosis/", remoteAddress: nextIp() }), /multipart/);
    expect400(
      await app.inject({
        method: "POST",
        url: "/diagnoses",
        payload: JPEG,
        headers: { "content-type": "image/jpeg" },
        remoteAddress: nextIp(),
      }),
      /multipart/,
    );
  });

  it("rejects multipart without a boundary", async () => {
    const res = await app.inject({
      method: "POST",
      url: "/diagnosis/",
      payload: "x",
      headers: { "content-type": "multipart/form-data" },
      remoteAddress: nextIp(),
    });
    expect400(res, /multipart/i);
  });

  it("rejects a truncated multipart body", async () => {
    const { payload, headers } = await multipartBody({ language: "en" }, { data: JPEG });
    const res = await app.inject({
      method: "POST",
      url: "/diagnosis/",
      payload: payload.subarray(0, payload.length - 30),
      headers,
      remoteAddress: nextIp(),
    });
    expect400(res, /multipart/i);
  });

  it("rejects garbage with a multipart content type", async () => {
    const res = await app.inject({
      method: "POST",
      url: "/diagnosis/",
      payload: "this is not a multipart body at all",
      headers: { "content-type": "multipart/form-data; boundary=xyz" },
      remoteAddress: nextIp(),
    });
    expect(res.statusCode).toBe(400);
  });

  it("rejects two files", async () => {
    const form = new FormData();
    form.append("image", new Blob([JPEG]), "a.jpg");
    form.append("image", new Blob([JPEG]), "b.jpg");
    const request = new Request("http://x/", { method: "POST", body: form });
    const res = await app.inject({
      method: "POST",
      url: "/diagnosis/",
      payload: Buffer.from(await request.arrayBuffer()),
      headers: { "content-type": request.headers.get("content-type")! },
      remoteAddress: nextIp(),
    });
    expect400(res, /one file/);
  });

  it("rejects an image over 10 MB and accepts one of exactly 10 MB", async () => {
    const big = Buffer.alloc(10 * 1024 * 1024 + 1, 0xff);
    expect400(await post({}, { data: big }), /larger than 10 MB/);
    const exact = Buffer.alloc(10 * 1024 * 1024, 0xff);
    const res = await post({}, { data: exact });
    expect(res.statusCode).toBe(200);
    expect(diagnoser.calls.at(-1)!.image.length).toBe(10 * 1024 * 1024);
  });

  it("rejects too many fields", async () => {
    const fields = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`f${i}`, "x"]));
    expect400(await post(fields), /Too many form/);
  });

  it("turns the core's ImageError into 400 with its message", async () => {
    diagnoser.failWith = new ImageError("The image is empty", "empty");
    try {
      expect400(await post({}, { data: Buffer.alloc(0) }), /^The image is empty$/);
    } finally {
      diagnoser.failWith = undefined;
    }
  });

  it("rejects a __proto__ field name", async () => {
    expect400(await post({ __proto__x: "1", ["__proto__"]: "x" }), /not allowed/);
  });
});

describe("failures inside the service", () => {
  it("answers 500 with a generic detail and logs the error with the request id", async () => {
    const { logger, lines } = capturedLogger();
    const { app: logged, diagnoser: failing } = await testApp({ logger });
    failing.failWith = new Error("onnx session exploded at /secret/path");
    try {
      const { payload, headers } = await multipartBody({}, { data: JPEG });
      const res = await logged.inject({ method: "POST", url: "/diagnosis/", payload, headers });
      expect(res.statusCode).toBe(500);
      expect(res.json()).toEqual({
        detail: "Internal server error",
        request_id: res.headers["x-request-id"],
      });
      expect(res.body).not.toMatch(/exploded|secret|at /);
      const errorLine = lines()
        .map((l) => JSON.parse(l))
        .find((l) => l.level === 50);
      expect(errorLine.request_id).toBe(res.headers["x-request-id"]);
      expect(errorLine.err.message).toMatch(/exploded/);
    } finally {
      await logged.close();
    }
  });

  it("keeps the 200 when the result sink fails, and logs it", async () => {
    const { logger, lines } = capturedLogger();
    const { app: withSink } = await testApp({
      logger,
      deps: {
        resultSink: async () => {
          throw new Error("redis down");
        },
      },
    });
    try {
      const { payload, headers } = await multipartBody({}, { data: JPEG });
      const res = await withSink.inject({ method: "POST", url: "/diagnosis/", payload, headers });
      expect(res.statusCode).toBe(200);
      await new Promise((r) => setImmediate(r));
      expect(lines().some((l) => l.includes("result sink failed") && l.includes(res.json().request_id))).toBe(
        true,
      );
    } finally {
      await withSink.close();
    }
  });
});
