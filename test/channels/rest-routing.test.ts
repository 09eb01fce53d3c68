// The REST app as src/server.ts assembles it: POST /diagnosis/ with routing keys in user_data also reaches
// the farmer through the channel queue, and the provider webhooks on the same server escape the API's limits.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routingOwner } from "../../channels/core/registry.js";
import { viewOf } from "../../channels/core/render/view.js";
import { PROVIDERS } from "../../channels/providers.js";
import { buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createResultSink } from "../../src/results/sink.js";
import { awaitsOfficer } from "../../src/review/queue.js";
import { counting, leafPhoto, loadCore } from "./support/core.js";
import { type Harness, PUBLIC_BASE_URL, startHarness, TEST_CONFIG, untilIdle } from "./support/harness.js";
import { postTwilio } from "./support/webhooks.js";

let h: Harness;
let core: Awaited<ReturnType<typeof loadCore>>;
let diagnoser: ReturnType<typeof counting>;

/** Only a partner with a key may have a result sent to a farmer. */
const PARTNER_KEY = "partner-key-0123456789abcdef";
const config = loadConfig({
  API_KEYS: `partner:${createHash("sha256").update(PARTNER_KEY).digest("hex")}:100`,
  REDIS_URL: "redis://127.0.0.1:6379",
  PUBLIC_BASE_URL,
  RATE_LIMIT_DIAGNOSIS: "3",
  RATE_LIMIT_HEALTH: "3",
  TWILIO_ACCOUNT_SID: TEST_CONFIG.twilio.accountSid,
  TWILIO_AUTH_TOKEN: TEST_CONFIG.twilio.authToken,
  TWILIO_WHATSAPP_FROM: TEST_CONFIG.twilio.whatsappFrom,
});

function multipart(fields: Record<string, string>, image: Buffer) {
  const boundary = "----cropdoctor-test-boundary";
  const parts = Object.entries(fields).map(
    ([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
  );
  const payload = Buffer.concat([
    Buffer.from(parts.join("")),
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="leaf.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`,
    ),
    image,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { payload, headers: { "content-type": `multipart/form-data; boundary=${boundary}` } };
}

beforeAll(async () => {
  core = await loadCore();
  diagnoser = counting(core.diagnoser);
  h = await startHarness({
    name: "rest",
    diagnoser,
    knowledge: core.knowledge,
    baseApp: async ({ redis, records, queue }) => {
      const resultSink = createResultSink({
        record: records.record,
        enqueueDelivery: queue.enqueueDelivery,
        ownerOf: routingOwner(PROVIDERS),
      });
      return buildApp(
        { config, diagnoser, redis, resultSink },
        { logger: false, rateLimitKeyPrefix: `test-rest-${process.pid}-${Date.now()}` },
      );
    },
  });
  h.startWorker();
}, 120_000);

afterAll(async () => {
  await h?.close();
  await core?.diagnoser.close();
});

describe("REST API and channels on one server", () => {
  it("routes a REST result to a WhatsApp farmer who has not written: a template asks them to, their reply gets it", async () => {
    const { payload, headers } = multipart(
      {
        language: "en",
        detail_level: "expert",
        user_data: JSON.stringify({ device: "feature-phone", channel: "whatsapp", phone: "+254711222333" }),
      },
      await leafPhoto(8),
    );
    const res = await h.app.inject({
      method: "POST",
      url: "/diagnosis/",
      payload,
      headers: { ...headers, "x-api-key": PARTNER_KEY },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json() as { request_id: string };
    expect(body.request_id).toBe(res.headers["x-request-id"]);
    expect(JSON.stringify(body)).not.toContain("254711222333");

    // Outside WhatsApp's 24-hour window (this number never wrote) only the approved template goes out.
    const [notice] = await h.standIn.waitForSends("twilio", 1, 30_000);
    const stored = await h.store.get(body.request_id);
    expect(stored?.owner).toBe("+254711222333");
    expect(notice!.body).toEqual(
      expect.objectContaining({
        From: `whatsapp:${TEST_CONFIG.twilio.whatsappFrom}`,
        To: "whatsapp:+254711222333",
        // A Kenyan number: Swahili, whose own template there is.
        ContentSid: TEST_CONFIG.twilio.whatsappNoticeSids.sw,
      }),
    );
    expect(notice!.body.Body).toBeUndefined();
    const [kept] = await h.records.sent.list("+254711222333");
    expect(kept).toMatchObject({ channel: "whatsapp", ok: false, held: true });

    // The farmer answers the template: the result, rendered at simple level although the partner asked for
    // expert, and nothing else (no help text for their "OK").
    const form = {
      MessageSid: `SM${"5".repeat(32)}`,
      AccountSid: TEST_CONFIG.twilio.accountSid,
      From: "whatsapp:+254711222333",
      To: `whatsapp:${TEST_CONFIG.twilio.whatsappFrom}`,
      Body: "OK",
      NumMedia: "0",
      WaId: "254711222333",
    };
    const reply = await postTwilio(h.app, form);
    expect(reply.statusCode).toBe(200);
    await untilIdle(h);
    const sends = h.standIn.sends("twilio");
    expect(sends).toHaveLength(2);
    expect(sends[1]!.body).toMatchObject({
      From: `whatsapp:${TEST_CONFIG.twilio.whatsappFrom}`,
      To: "whatsapp:+254711222333",
    });
    expect(sends[1]!.body.Body).toBe(
      h.renderer.result(
        viewOf(stored!, "en", core.knowledge, { officerReview: awaitsOfficer }),
        "en",
        h.capabilities("twilio", "whatsapp"),
      ),
    );
    expect((await h.records.sent.list("+254711222333"))[0]).toMatchObject({ ok: true });
  }, 60_000);

  it("does not rate-limit the providers' webhooks per IP", async () => {
    for (let i = 0; i < 8; i++) {
      const form = {
        MessageSid: `SM${String(i).padStart(32, "7")}`,
        AccountSid: TEST_CONFIG.twilio.accountSid,
        From: `+1415555${String(1000 + i)}`,
        To: "+15005550006",
        Body: "HELP",
        NumMedia: "0",
      };
      expect((await postTwilio(h.app, form)).statusCode).toBe(200);
    }
    // The eight messages are answered before the file's Redis connection closes (a job still running then
    // fails the suite with "Connection is closed").
    await untilIdle(h);
  });
});
