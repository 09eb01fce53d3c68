// The photo notice after a farmer's first message says how to refuse in the way their channel allows: a
// button where the channel shows buttons (the text points at it, never at a digit to type), "reply 9" where
// it does not. Six languages, the providers' own capability declarations and the real renderer; only the
// sending is recorded instead of going to a provider.
import { describe, expect, it } from "vitest";
import { encodeAction } from "../../channels/core/actions.js";
import { conversation } from "../../channels/core/conversation.js";
import { createExpertLoop } from "../../channels/core/expert-loop.js";
import { createAdapters } from "../../channels/core/registry.js";
import { createRenderer } from "../../channels/core/render/index.js";
import { createTexts } from "../../channels/core/render/texts.js";
import type { Adapter, Reply } from "../../channels/core/types.js";
import { FARMER_REPLIES } from "../../channels/limits.js";
import { PROVIDERS } from "../../channels/providers.js";
import { createKnowledge } from "../../src/diagnosis/kb.js";
import { LANGUAGES } from "../../src/diagnosis/types.js";
import { createRecords } from "../../src/results/records.js";
import { TEST_CONFIG } from "./support/harness.js";

const renderer = createRenderer(createTexts());
const knowledge = await createKnowledge();
// Never called: only their capabilities are read.
const adapters = createAdapters(
  PROVIDERS,
  TEST_CONFIG,
  Object.fromEntries(PROVIDERS.map((p) => [p.id, "http://127.0.0.1:9"])),
);
const PHOTO_CHANNELS = [
  { provider: "telegram", channel: "telegram" },
  { provider: "twilio", channel: "whatsapp" },
  { provider: "twilio", channel: "sms" },
];
let farmer = 0;

async function notice(provider: string, channel: string, language: (typeof LANGUAGES)[number]) {
  const real = adapters.get(provider)!;
  const sent: Reply[] = [];
  const recording: Adapter = { ...real, send: async (reply) => void sent.push(reply) };
  const target = { provider, channel, to: `farmer-${++farmer}` };
  const talk = conversation(target, recording, language, { renderer, knowledge });
  const records = createRecords(undefined);
  await createExpertLoop({ records, renderer }).afterTurn(talk, target.to);
  expect(sent).toHaveLength(1);
  return { reply: sent[0]!, buttons: real.capabilities(channel).buttons };
}

describe.each(LANGUAGES)("the photo notice in %s", (language) => {
  const t = (key: string, vars?: Record<string, string>) => renderer.texts(language, key, vars);

  it.each(PHOTO_CHANNELS)("$provider/$channel: refused the way the channel allows", async (at) => {
    const { reply, buttons } = await notice(at.provider, at.channel, language);
    if (buttons) {
      expect(reply.text).toBe(t("consent_notice_button"));
      expect(reply.text).not.toContain(FARMER_REPLIES.refusePhotos);
      expect(reply.buttons).toEqual([
        [{ text: t("consent_button"), data: encodeAction({ kind: "refuse_photos" }) }],
      ]);
    } else {
      expect(reply.text).toBe(t("consent_notice", { refuse: FARMER_REPLIES.refusePhotos }));
      expect(reply.text).toContain(FARMER_REPLIES.refusePhotos);
      expect(reply.buttons).toBeUndefined();
    }
  });

  it("says the same about keeping photos either way, only how to refuse differs", () => {
    const [keptWithReply] = t("consent_notice", { refuse: FARMER_REPLIES.refusePhotos }).split(/(?<=\.) /);
    expect(t("consent_notice_button").startsWith(keptWithReply!)).toBe(true);
  });
});
