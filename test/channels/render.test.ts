import { describe, expect, it } from "vitest";
import { CHAT_LIMITS, renderChat } from "../../channels/core/render/chat.js";
import { createRenderer } from "../../channels/core/render/index.js";
import { fitSentences, renderSmsSummary, renderSmsTreatment } from "../../channels/core/render/sms.js";
import { countSegments, countUnits, isGsm7 } from "../../channels/core/render/sms-segments.js";
import { createTexts } from "../../channels/core/render/texts.js";
import { paginate, USSD_LIMITS, ussdFits, ussdScreen } from "../../channels/core/render/ussd.js";
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
  it.each(LANGUAGES)("%s: a summary fits 3 segments and ends with how to get the treatment", (language) => {
    const text = renderSmsSummary(viewOf(stored(), language, wordy), language, t);
    expect(countSegments(text).segments).toBeLessThanOrEqual(3);
    expect(text.endsWith("K7M4QX 2")).toBe(true);
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
        "Do not water the leaves, water the soil.\nTreatment: send K7M4QX 2",
    );
  });

  it("gives the treatment for the code and 2", () => {
    const text = renderSmsTreatment(viewOf(stored(), "en"), "en", t);
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

describe("USSD screens: 160 octets, that is 182 GSM-7 septets or 80 UCS-2 units", () => {
  const screenOf = (reply: string) => reply.slice("CON ".length);

  it("keep their options when the body is too long", () => {
    const screen = screenOf(ussdScreen("CON", "word ".repeat(100), ["1. Next", "0. Back"]));
    expect(ussdFits(screen)).toBe(true);
    expect(screen.endsWith("...\n1. Next\n0. Back")).toBe(true);
  });

  it("Swahili: GSM-7, measured in septets up to 182", () => {
    const body = "Ondoa na uchome majani yenye ugonjwa, kisha nyunyiza dawa ya shaba. ".repeat(4);
    const screen = screenOf(ussdScreen("CON", body, ["1. Endelea", "0. Rudi"]));
    expect(isGsm7(screen)).toBe(true);
    expect(countUnits(screen, "GSM-7")).toBeLessThanOrEqual(USSD_LIMITS["GSM-7"]);
    expect(countUnits(screen, "GSM-7")).toBeGreaterThan(160);
  });

  it("extension characters take two septets each", () => {
    const screen = screenOf(ussdScreen("END", "Dawa [shaba] ".repeat(20)));
    expect(isGsm7(screen)).toBe(true);
    expect(countUnits(screen, "GSM-7")).toBeLessThanOrEqual(182);
    expect(screen.length).toBeLessThan(countUnits(screen, "GSM-7"));
  });

  it("French with ê or ç: UCS-2, measured in UTF-16 units up to 80", () => {
    const body = "Enlevez et brûlez les feuilles malades, même les tiges. ".repeat(4);
    const screen = screenOf(ussdScreen("CON", body, ["1. Suite", "0. Retour"]));
    expect(isGsm7(screen)).toBe(false);
    expect(screen.length).toBeLessThanOrEqual(USSD_LIMITS["UCS-2"]);
    expect(screen.length).toBeGreaterThan(60);
    expect(screen.endsWith("...\n1. Suite\n0. Retour")).toBe(true);
  });

  it("French within GSM-7 (é, è, à are in it) keeps the 182 septets", () => {
    const screen = screenOf(
      ussdScreen("END", "Coupez les tiges atteintes et jetez-les à l'écart du champ. ".repeat(5)),
    );
    expect(isGsm7(screen)).toBe(true);
    expect(screen.length).toBeGreaterThan(USSD_LIMITS["UCS-2"]);
    expect(countUnits(screen, "GSM-7")).toBeLessThanOrEqual(182);
  });

  it("typographic apostrophes do not halve a screen", () => {
    const screen = screenOf(ussdScreen("END", "Retirez l’herbe, puis l’arrosoir : c’est fait. ".repeat(5)));
    expect(isGsm7(screen)).toBe(true);
    expect(screen).toContain("l'herbe");
  });

  it("paginates long lists into screens that fit with their options", () => {
    const options = ["1. Suite", "0. Retour"];
    const lines = Array.from({ length: 12 }, (_, i) => `- étape ${i} : traitez la parcelle, même à ${i} h`);
    const pages = paginate(lines, options);
    expect(pages.length).toBeGreaterThan(4);
    for (const page of pages) expect(ussdFits(`${page}\n${options.join("\n")}`)).toBe(true);
    expect(pages.join("\n")).toBe(lines.join("\n"));
  });
});
