import { describe, expect, it } from "vitest";
import { CHAT_LIMITS, renderChat } from "../../channels/core/render/chat.js";
import { createRenderer } from "../../channels/core/render/index.js";
import { fitSentences, renderSmsDetails, renderSmsSummary } from "../../channels/core/render/sms.js";
import { countSegments } from "../../channels/core/render/sms-segments.js";
import { createTexts } from "../../channels/core/render/texts.js";
import { paginate, USSD_SCREEN_MAX, ussdScreen } from "../../channels/core/render/ussd.js";
import { type SimpleKnowledge, viewOf } from "../../channels/core/render/view.js";
import { LANGUAGES } from "../../src/diagnosis/types.js";
import type { StoredResult } from "../../src/results/types.js";
import { resultFixture } from "./support/fixtures.js";

const t = createTexts();
const stored = (overrides = {}): StoredResult => ({
  result: resultFixture(overrides),
  code: "K7M4QX",
  language: "en",
  createdAt: new Date().toISOString(),
});

// Long texts in accented languages: the worst case for the 3-segment budget.
const wordy: SimpleKnowledge = {
  describe: (_id, language) => ({
    name: language === "fr" ? "Mildiou de la tomate" : "Late blight",
    description: "Une moisissure aquatique qui se propage très vite par temps frais : ça s’étend. "
      .repeat(6)
      .trim(),
  }),
  treatment: () => ({
    immediateActions: Array.from(
      { length: 8 },
      (_, i) => `Étape ${i + 1} : enlevez et brûlez les feuilles malades`,
    ),
    prevention: ["Espacez les plants", "Alternez les cultures chaque saison"],
  }),
};

describe("SMS rendering", () => {
  it.each(LANGUAGES)("%s: a diagnosis fits 3 segments and ends with the code", (language) => {
    const text = renderSmsSummary(viewOf(stored(), language, wordy), language, t);
    expect(countSegments(text).segments).toBeLessThanOrEqual(3);
    expect(text.endsWith("K7M4QX")).toBe(true);
  });

  it("cuts between sentences, never inside one", () => {
    const text = renderSmsSummary(viewOf(stored(), "fr", wordy), "fr", t);
    const [body] = text.split("\n");
    expect(body).toMatch(/[.!?]$/);
    expect(countSegments(text).encoding).toBe("UCS-2");
    expect(text.startsWith("Mildiou de la tomate (87%). Une moisissure aquatique")).toBe(true);
  });

  it("uses GSM-7 (160/153) when the text allows it", () => {
    const text = renderSmsSummary(viewOf(stored(), "en"), "en", t);
    expect(countSegments(text).encoding).toBe("GSM-7");
    expect(text).toBe(
      "Late blight (87%). A water mould that spreads fast in cool, wet weather. Dark patches grow on leaves and stems. " +
        "Fruit rots. Remove and burn the sick leaves. Spray a copper fungicide today. " +
        "Do not water the leaves, water the soil.\nMore: send K7M4QX",
    );
  });

  it("gives the treatment for a code", () => {
    const text = renderSmsDetails(viewOf(stored(), "en"), "en", t);
    expect(text).toContain("What to do: Remove and burn the sick leaves.");
    expect(text).toContain("Prevention: Leave space between plants.");
    expect(text.endsWith("Result code: K7M4QX")).toBe(true);
  });

  it("keeps the code even when one sentence alone is too long", () => {
    const text = fitSentences([`${"word ".repeat(200)}end.`], "More: send K7M4QX");
    expect(countSegments(text).segments).toBeLessThanOrEqual(3);
    expect(text.endsWith("More: send K7M4QX")).toBe(true);
  });

  it("answers a bad photo with advice, not a diagnosis", () => {
    const renderer = createRenderer(t);
    const view = viewOf(
      stored({ image_analysis: { is_plant: true, quality_issue: "too_dark", detected_crop: null } }),
      "sw",
    );
    expect(renderer.result(view, "sw", "sms")).toBe("Picha ina giza sana. Tafadhali tuma iliyopigwa mchana.");
  });
});

describe("chat rendering", () => {
  it("escapes HTML for Telegram and stays under 4096", () => {
    const huge: SimpleKnowledge = {
      describe: () => ({ name: "Blight <b>", description: "x & y. ".repeat(400) }),
      treatment: () => ({
        immediateActions: Array.from({ length: 300 }, () => "Spray < 5 g/L"),
        prevention: [],
      }),
    };
    const text = renderChat(viewOf(stored(), "en", huge), "en", t, "telegram");
    expect(text.length).toBeLessThanOrEqual(CHAT_LIMITS.telegram);
    expect(text).toContain("<b>Blight &lt;b&gt; (87% sure).</b>");
    expect(text.endsWith("Result code: K7M4QX")).toBe(true);
  });

  it("answers an unsure or healthy result with one sentence and no code, a diagnosis with its code", () => {
    const renderer = createRenderer(t);
    const unsure = viewOf(stored({ crop_health: "unknown", diagnoses: [] }), "sw", wordy);
    const healthy = viewOf(stored({ crop_health: "healthy", diagnoses: [] }), "sw", wordy);
    expect(renderer.result(unsure, "sw", "whatsapp")).toBe(t("sw", "uncertain"));
    expect(renderer.result(healthy, "sw", "whatsapp")).toBe(t("sw", "healthy"));
    expect(renderer.result(viewOf(stored(), "sw", wordy), "sw", "whatsapp")).toContain("K7M4QX");
  });

  it("stays under Twilio's 1600 for WhatsApp", () => {
    const text = renderChat(viewOf(stored(), "fr", wordy), "fr", t, "whatsapp");
    expect(text.length).toBeLessThanOrEqual(CHAT_LIMITS.whatsapp);
    expect(text.startsWith("*Mildiou de la tomate (sûr à 87 %).*")).toBe(true);
  });
});

describe("USSD screens", () => {
  it("never exceed 182 characters and keep their options", () => {
    const screen = ussdScreen("CON", "word ".repeat(100), ["1. Next", "0. Back"]);
    expect(screen.length - "CON ".length).toBeLessThanOrEqual(USSD_SCREEN_MAX);
    expect(screen.endsWith("1. Next\n0. Back")).toBe(true);
  });

  it("paginates long lists into screens", () => {
    const pages = paginate(
      Array.from({ length: 12 }, (_, i) => `- step ${i} ${"x".repeat(30)}`),
      160,
    );
    expect(pages.length).toBeGreaterThan(2);
    for (const page of pages) expect(page.length).toBeLessThanOrEqual(160);
  });
});
