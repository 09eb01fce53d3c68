// What a failed photo download means: the provider slowing us down (429: pause, retry later), our credentials
// refused (401/403: ours to fix, the job is retried and logged), or a photo that is gone (the farmer is asked
// to resend). The core is beside the point here: a test double answers every photo with a fixed result.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { downloadMedia } from "../../channels/core/media.js";
import { inboundJobId } from "../../channels/core/queue.js";
import { createTexts } from "../../channels/core/render/texts.js";
import type { InboundMessage } from "../../channels/core/types.js";
import { MAX_MEDIA_BYTES, RETRY_DELAYS_MS } from "../../channels/limits.js";
import { decodeImage } from "../../src/diagnosis/image/decode.js";
import { sniffFormat } from "../../src/diagnosis/image/sniff.js";
import { createKnowledge } from "../../src/diagnosis/kb.js";
import type { DiagnosisContext } from "../../src/diagnosis/types.js";
import { errorChain } from "../../src/logger.js";
import { pngBomb } from "../diagnosis/fixtures.js";
import { freePort } from "../support/redis-server.js";
import { FixedDiagnoserDouble } from "./support/doubles.js";
import { type Harness, startHarness } from "./support/harness.js";

/** A fixed answer, but a real PNG is first read as the core reads it: a pixel bomb is refused as the core does. */
class PngCheckingDouble extends FixedDiagnoserDouble {
  override async diagnose(image: Buffer, context: DiagnosisContext, requestId: string) {
    if (sniffFormat(image) === "png") await decodeImage(image);
    return super.diagnose(image, context, requestId);
  }
}

let h: Harness;
const double = new PngCheckingDouble();
let next = 0;
const RESEND = /^We could not read your photo/;
const texts = createTexts();

function whatsappPhoto(name: string): InboundMessage {
  next += 1;
  return {
    provider: "twilio",
    channel: "whatsapp",
    messageId: `MM${String(next).padStart(32, "5")}`,
    from: `+1415555${String(3000 + next)}`,
    to: "+14155238886",
    owner: `+1415555${String(3000 + next)}`,
    media: { ref: `${h.standIn.baseUrl}/media/${name}`, contentType: "image/jpeg" },
    receivedAt: new Date().toISOString(),
  };
}

async function completed(message: InboundMessage, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while ((await h.queue.queue.getJobState(inboundJobId(message))) !== "completed") {
    if (Date.now() > deadline) throw new Error(`${message.messageId} did not complete`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return (await h.queue.queue.getJob(inboundJobId(message)))!;
}

const downloads = (name: string) => h.standIn.requests.filter((r) => r.path.endsWith(`/${name}`));
const replyTo = (message: InboundMessage) =>
  h.standIn.sends("twilio").filter((r) => r.body.To === `whatsapp:${message.from}`);

beforeAll(async () => {
  h = await startHarness({ name: "media", diagnoser: double, knowledge: await createKnowledge() });
  h.startWorker();
  for (const name of ["slow.jpg", "unauthorized.jpg", "forbidden.jpg", "tg-slow"])
    h.standIn.media.set(name, Buffer.from("jpeg bytes the double does not read"));
});
afterAll(async () => {
  await h?.close();
});

describe("photo downloads", () => {
  it("Twilio media 429: the queue pauses for its Retry-After, then the photo is diagnosed", async () => {
    h.standIn.failMedia("slow.jpg", 1, 429, 2);
    const message = whatsappPhoto("slow.jpg");
    await h.queue.enqueueInbound(message);
    const job = await completed(message);

    const [refused, served] = downloads("slow.jpg");
    expect([refused!.failedWith, served!.failedWith]).toEqual([429, undefined]);
    expect(served!.at - refused!.at).toBeGreaterThanOrEqual(1_950);
    const replies = replyTo(message);
    expect(replies).toHaveLength(1);
    expect(String(replies[0]!.body.Body)).not.toMatch(RESEND);
    expect(String(replies[0]!.body.Body)).toContain("Tomato late blight");
    expect(job.attemptsMade).toBeLessThanOrEqual(1);
  });

  it.each([
    [401, "unauthorized.jpg"],
    [403, "forbidden.jpg"],
  ])(
    "Twilio media %i: our fault, so the job is retried and logged; the farmer hears the photo arrived, not to resend",
    async (status, name) => {
      h.standIn.failMedia(name, 1, status);
      const message = whatsappPhoto(name);
      await h.queue.enqueueInbound(message);
      const job = await completed(message);

      expect(downloads(name).map((r) => r.failedWith)).toEqual([status, undefined]);
      // One attempt failed (and was logged) before the retry got the photo.
      expect(job.attemptsMade).toBe(2);
      const failure = h.logs
        .map((line) => JSON.parse(line) as { msg: string; jobId?: string; err?: string; retryInMs?: number })
        .find((line) => line.msg === "job attempt failed, will retry" && line.jobId === job.id);
      expect(failure).toMatchObject({
        err: `twilio media: HTTP ${status}, our credentials were refused`,
        retryInMs: RETRY_DELAYS_MS[0],
      });
      // Not silence while it is retried: the farmer is told the photo arrived, then gets the answer.
      const replies = replyTo(message).map((r) => String(r.body.Body));
      expect(replies).toEqual([texts("en", "delayed"), expect.stringContaining("Tomato late blight")]);
    },
  );

  it("Twilio media 404: the photo is gone, the farmer is asked to resend", async () => {
    const calls = double.calls;
    const message = whatsappPhoto("never-stored.jpg");
    await h.queue.enqueueInbound(message);
    await completed(message);
    const replies = replyTo(message);
    expect(replies).toHaveLength(1);
    expect(String(replies[0]!.body.Body)).toMatch(RESEND);
    expect(double.calls).toBe(calls);
  });

  it("Telegram file 429: the queue pauses too", async () => {
    h.standIn.failMedia("tg-slow", 1, 429, 1);
    const message: InboundMessage = {
      provider: "telegram",
      channel: "telegram",
      messageId: "990001",
      from: "990001",
      to: "bot",
      owner: "tg:990001",
      media: { ref: "tg-slow" },
      receivedAt: new Date().toISOString(),
    };
    await h.queue.enqueueInbound(message);
    await completed(message);
    const [refused, served] = downloads("tg-slow");
    expect([refused!.failedWith, served!.failedWith]).toEqual([429, undefined]);
    expect(served!.at - refused!.at).toBeGreaterThanOrEqual(950);
    const reply = h.standIn.sends("telegram").find((r) => r.body.chat_id === "990001");
    expect(String(reply?.body.text)).toContain("Tomato late blight");
  });
});

describe("a photo too large to take", () => {
  const telegramPhoto = (ref: string, id: string): InboundMessage => ({
    provider: "telegram",
    channel: "telegram",
    messageId: id,
    from: id,
    to: "bot",
    owner: `tg:${id}`,
    media: { ref },
    receivedAt: new Date().toISOString(),
  });
  const told = (id: string) =>
    h.standIn
      .sends("telegram")
      .filter((r) => r.body.chat_id === id)
      .map((r) => String(r.body.text));
  const sendAsPhoto = texts("en", "too_large");

  it("Telegram, over our limit: the farmer is told to send it as an ordinary photo, not asked to resend it", async () => {
    h.standIn.media.set("tg-heavy", Buffer.alloc(MAX_MEDIA_BYTES + 1, 0xff));
    const message = telegramPhoto("tg-heavy", "990101");
    await h.queue.enqueueInbound(message);
    await completed(message);
    expect(told("990101")).toEqual([sendAsPhoto]);
  });

  it("WhatsApp, under 10 MB but over the core's megapixels (a 108 MP photo): told the same, not to resend it", async () => {
    h.standIn.media.set("huge-sensor.png", pngBomb(12_000, 9_000));
    const message = whatsappPhoto("huge-sensor.png");
    await h.queue.enqueueInbound(message);
    await completed(message);
    expect(replyTo(message).map((r) => String(r.body.Body))).toEqual([sendAsPhoto]);
  });

  it("Telegram, over the Bot API's 20 MB (getFile refuses it): told the same, not left without an answer", async () => {
    const calls = double.calls;
    const message = telegramPhoto("over-20-mb-1", "990102");
    await h.queue.enqueueInbound(message);
    await completed(message);
    expect(told("990102")).toEqual([sendAsPhoto]);
    expect(double.calls).toBe(calls);
  });
});

describe("a download that cannot connect", () => {
  it("fails with the network's own reason (ECONNREFUSED), not just fetch's TypeError", async () => {
    const port = await freePort();
    const error = await downloadMedia(`http://127.0.0.1:${port}/photo.jpg`, {
      label: "twilio media",
      provider: "twilio",
    }).then(
      () => new Error("downloaded"),
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toMatch(
      /^twilio media: download failed \(TypeError: fetch failed <- .*ECONNREFUSED/,
    );
    expect((error.cause as Error).name).toBe("TypeError");
    expect(errorChain(error)).toContain("(ECONNREFUSED)");
  });
});
