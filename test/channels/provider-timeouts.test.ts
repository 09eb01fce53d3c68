// A provider that takes the connection and never answers must not hold a farmer's job: each adapter abandons
// the call after its timeout (PROVIDER_TIMEOUT_MS in production), and the queue retries the job.
import { once } from "node:events";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAfricasTalkingAdapter } from "../../channels/africastalking/send.js";
import type { Adapter } from "../../channels/core/types.js";
import { createTelegramAdapter } from "../../channels/telegram/send.js";
import { createTwilioAdapter } from "../../channels/twilio/send.js";
import { TEST_CONFIG } from "./support/harness.js";

const TIMEOUT_MS = 300;
const silent = createServer(() => {
  // Never answers: the request stays open until the client gives up.
});
let apiRoot: string;

beforeAll(async () => {
  silent.listen(0, "127.0.0.1");
  await once(silent, "listening");
  apiRoot = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
});
afterAll(async () => {
  silent.closeAllConnections();
  silent.close();
});

/** The next request the silent provider receives, resolved when its client hangs up. */
function nextAbandoned(): Promise<string> {
  return new Promise((resolve) =>
    silent.once("request", (req: IncomingMessage) => req.socket.once("close", () => resolve(req.url ?? ""))),
  );
}

const adapters: { provider: string; channel: string; to: string; make: () => Adapter }[] = [
  {
    provider: "telegram",
    channel: "telegram",
    to: "12345",
    make: () => createTelegramAdapter({ config: TEST_CONFIG.telegram, apiRoot, timeoutMs: TIMEOUT_MS }),
  },
  {
    provider: "twilio",
    channel: "sms",
    to: "+254700000001",
    make: () => createTwilioAdapter({ config: TEST_CONFIG.twilio, apiRoot, timeoutMs: TIMEOUT_MS }),
  },
  {
    provider: "africastalking",
    channel: "sms",
    to: "+254700000002",
    make: () =>
      createAfricasTalkingAdapter({ config: TEST_CONFIG.africasTalking, apiRoot, timeoutMs: TIMEOUT_MS }),
  },
];

describe("a provider that never answers", () => {
  it.each(adapters)("$provider: the send fails after the timeout and closes its connection", async (a) => {
    const abandoned = nextAbandoned();
    const sent = a.make().send({ provider: a.provider, channel: a.channel, to: a.to, text: "hello" });
    await expect(sent).rejects.toThrow();
    expect(await abandoned).toMatch(/sendMessage$|Messages\.json$|messaging$/);
  });

  it("telegram: showing 'typing' and fetching a photo give up too", async () => {
    const telegram = adapters[0]!.make();
    const typing = nextAbandoned();
    await expect(telegram.showTyping!("12345")).rejects.toThrow();
    expect(await typing).toMatch(/sendChatAction$/);
    const file = nextAbandoned();
    await expect(telegram.fetchMedia({ ref: "file-id" })).rejects.toThrow();
    expect(await file).toMatch(/getFile$/);
  });
});
