import { describe, expect, it } from "vitest";
import { answerViewOf } from "../../channels/core/render/answer.js";
import { renderChat } from "../../channels/core/render/chat.js";
import { createRenderer } from "../../channels/core/render/index.js";
import { fitSentences, renderSmsSummary, renderSmsTreatment } from "../../channels/core/render/sms.js";
import { createTexts } from "../../channels/core/render/texts.js";
import { paginate, ussdFits, ussdScreen } from "../../channels/core/render/ussd.js";
import { bandOf, type ViewKnowledge, viewOf } from "../../channels/core/render/view.js";
import type { Capabilities } from "../../channels/core/types.js";
import { CHAT_MESSAGE_CHARS, CONFIDENCE_BANDS, USSD_SCREEN } from "../../channels/limits.js";
import { createKnowledge } from "../../src/diagnosis/kb.js";
import { LANGUAGES } from "../../src/diagnosis/types.js";
import { OFFICER_SMS_MAX_SEGMENTS, SMS_MAX_SEGMENTS } from "../../src/limits.js";
import type { Decision, StoredResult } from "../../src/results/types.js";
import {
  countSegments,
  countUnits,
  gsm7Letters,
  isGsm7,
  plainPunctuation,
} from "../../src/text/sms-segments.js";
import { resultFixture } from "./support/fixtures.js";

const t = createTexts();
const kb = await createKnowledge();
const renderer = createRenderer(t);
const SMS: Capabilities = {
  text: { kind: "sms", maxSegments: SMS_MAX_SEGMENTS },
  buttons: false,
  typing: false,
  media: true,
};
const WHATSAPP: Capabilities = {
  text: { kind: "chat", style: "asterisks", maxChars: CHAT_MESSAGE_CHARS.whatsapp },
  buttons: false,
  typing: false,
  media: true,
};
const stored = (overrides = {}): StoredResult => ({
  result: resultFixture(overrides),
  code: "K7M4QX",
  language: "en",
  createdAt: new Date().toISOString(),
});
const unsure = (candidates = [{ id: "potato__early_blight", name: "Early blight", confidence: 0.41 }]) =>
  stored({ outcome: "unsure", crop_health: "unknown", diagnoses: [], candidates });

// Long texts in accented languages: the worst case for the 3-segment budget.
const wordy: ViewKnowledge = {
  describe: (id, language, level) => ({
    ...kb.describe(id, language, level),
    name: language === "fr" ? "Mildiou de la tomate" : "Late blight",
    description: "Une moisissure aquatique qui se propage très vite par temps frais : ça s’étend. "
      .repeat(6)
      .trim(),
  }),
  name: (id, language) => kb.name(id, language),
  treatment: (ids, language, level) => ({
    ...kb.treatment(ids, language, level),
    immediate_actions: Array.from(
      { length: 8 },
      (_, i) => `Étape ${i + 1} : enlevez et brûlez les feuilles malades`,
    ),
    prevention: ["Espacez les plants", "Alternez les cultures chaque saison"],
  }),
};

describe("confidence in words", () => {
  it.each([
    [1, "very_likely"],
    [CONFIDENCE_BANDS.veryLikely, "very_likely"],
    [CONFIDENCE_BANDS.veryLikely - 0.001, "likely"],
    [CONFIDENCE_BANDS.likely, "likely"],
    [CONFIDENCE_BANDS.likely - 0.001, "possibly"],
    [0.2, "possibly"],
  ])("%f reads %s", (confidence, band) => {
    expect(bandOf(confidence)).toBe(band);
  });

  it.each(LANGUAGES)("%s: no answer states a percentage, not even for a 100 %% reading", (language) => {
    const sure = stored();
    sure.result.diagnoses[0]!.confidence = 1;
    const view = viewOf(sure, language, kb);
    const texts = [
      renderer.result(view, language, SMS),
      renderer.treatment(view, language, SMS),
      renderer.result(view, language, WHATSAPP),
      renderer.result(viewOf(unsure(), language, kb), language, SMS),
    ];
    for (const text of texts) expect(text).not.toMatch(/%|\b100\b/);
    expect(texts[0]).toContain(t(language, "confidence.very_likely"));
  });
});

describe("SMS rendering", () => {
  it.each(LANGUAGES)("%s: a summary fits 3 segments and ends with how to get the treatment", (language) => {
    const text = renderSmsSummary(viewOf(stored(), language, wordy), language, t, SMS_MAX_SEGMENTS);
    expect(countSegments(text).segments).toBeLessThanOrEqual(3);
    expect(text.endsWith(t(language, "code_more", { code: "K7M4QX" }))).toBe(true);
  });

  it("cuts between sentences, never inside one", () => {
    const text = renderSmsSummary(viewOf(stored(), "fr", wordy), "fr", t, SMS_MAX_SEGMENTS);
    const [body] = text.split("\n");
    expect(body).toMatch(/[.!?]$/);
    expect(text.startsWith("Mildiou de la tomate (probable). Une moisissure aquatique")).toBe(true);
  });

  it("writes a summary in GSM-7 letters when that carries more of it, and keeps the accents when all fit", () => {
    const view = viewOf(stored(), "fr", wordy);
    if (view.kind !== "diagnosis") throw new Error("expected a diagnosis view");
    const text = renderSmsSummary(view, "fr", t, SMS_MAX_SEGMENTS);
    // One ê or ç makes a message UCS-2 (67 a segment): folded, three GSM-7 segments carry more sentences.
    expect(countSegments(text).encoding).toBe("GSM-7");
    // More than three UCS-2 segments (3 × 67 units) could hold, and every sentence whole.
    expect(countUnits(text, "GSM-7")).toBeGreaterThan(3 * 67);
    expect(text).toContain(gsm7Letters(plainPunctuation(view.description.split(/(?<=[.!?]) /)[0]!)));
    expect(text).not.toMatch(/[êçôâîû]/);
    // A text that fits as written keeps its accents.
    expect(fitSentences(["Une tache brune près de la tige.", "Arrachez-la tôt."], "Code : K7M4QX", 3)).toBe(
      "Une tache brune près de la tige. Arrachez-la tôt.\nCode : K7M4QX",
    );
  });

  it.each(LANGUAGES)(
    "%s: a doubtful diagnosis says an officer will look, right after what to do first",
    (language) => {
      const doubtful = stored();
      doubtful.result.diagnoses[0]!.confidence = 0.45;
      const view = viewOf(doubtful, language, kb, { officerReview: () => true });
      const text = renderSmsSummary(view, language, t, SMS_MAX_SEGMENTS);
      expect(countSegments(text).segments).toBeLessThanOrEqual(SMS_MAX_SEGMENTS);
      expect(gsm7Letters(text)).toContain(gsm7Letters(plainPunctuation(t(language, "officer"))));
    },
  );

  it("is written from the knowledge base in the reader's language, not from the texts stored with the result", () => {
    const text = renderSmsSummary(viewOf(stored(), "en", kb), "en", t, SMS_MAX_SEGMENTS);
    const { name, description, urgency } = kb.describe("tomato__late_blight", "en", "simple");
    const [first, second] = kb.treatment(["tomato__late_blight"], "en", "simple").immediate_actions;
    expect(countSegments(text).encoding).toBe("GSM-7");
    // How urgent it is follows the name: it fits with the whole core here.
    const act = t("en", `urgency.${urgency}`);
    expect(text.startsWith(`${name} (likely). ${act} ${description} ${first} ${second}`)).toBe(true);
    expect(text.endsWith("\nTreatment: send K7M4QX 2")).toBe(true);
    expect(text).not.toContain("A water mould");
  });

  it.each([
    ["en", "Treatment: send K7M4QX 2"],
    ["fr", "Traitement : envoyez K7M4QX 2"],
    ["sw", "Matibabu: tuma K7M4QX 2"],
    ["es", "Tratamiento: escriba K7M4QX 2"],
    ["pt", "Tratamento: envie K7M4QX 2"],
    ["it", "Trattamento: invia K7M4QX 2"],
  ] as const)("%s: the tail tells what to do (a verb): %s", (language, tail) => {
    expect(t(language, "code_more", { code: "K7M4QX" })).toBe(tail);
  });

  it("gives the treatment for the code and 2", () => {
    const text = renderSmsTreatment(viewOf(stored(), "en", kb), "en", t, SMS_MAX_SEGMENTS);
    const { immediate_actions, prevention } = kb.treatment(["tomato__late_blight"], "en", "simple");
    expect(text).toContain(`What to do: ${immediate_actions[0]}`);
    expect(text).toContain(`Prevention: ${prevention[0]}`);
    expect(text.endsWith("Result code: K7M4QX")).toBe(true);
  });

  it("keeps the code even when one sentence alone is too long", () => {
    const text = fitSentences([`${"word ".repeat(200)}end.`], "More: send K7M4QX", 3);
    expect(countSegments(text).segments).toBeLessThanOrEqual(3);
    expect(text.endsWith("More: send K7M4QX")).toBe(true);
  });

  it("answers a bad photo with advice, no code and nothing else", () => {
    const view = viewOf(
      stored({ image_analysis: { is_plant: true, quality_issue: "too_dark", detected_crop: null } }),
      "sw",
      kb,
    );
    expect(renderer.result(view, "sw", SMS)).toBe("Picha ina giza sana. Tafadhali tuma iliyopigwa mchana.");
  });
});

describe("an officer's own words on SMS", () => {
  it("go in GSM-7 when only their punctuation is typographic", () => {
    const sms: Capabilities = {
      text: { kind: "sms", maxSegments: SMS_MAX_SEGMENTS },
      buttons: false,
      typing: false,
      media: false,
    };
    const text = renderer.answer(
      {
        kind: "text",
        code: "K7M4QX",
        diagnosis: "It’s early blight – not late blight",
        advice: "Remove the “spotted” leaves…",
      },
      "en",
      sms,
    );
    expect(isGsm7(text)).toBe(true);
    expect(text).toContain(`It's early blight - not late blight`);
  });
});

describe("answers that are not a named disease", () => {
  it.each(LANGUAGES)(
    "%s: unsure gives the best guess, what makes a better photo, and the code",
    (language) => {
      const text = renderer.result(viewOf(unsure(), language, kb), language, SMS);
      expect(text).toContain(
        t(language, "unsure_guess", { name: kb.name("potato__early_blight", language) }),
      );
      expect(text).toContain(t(language, "better_photo"));
      expect(text.endsWith(t(language, "code_line", { code: "K7M4QX" }))).toBe(true);
    },
  );

  it("unsure without any reading says so, with the code", () => {
    const text = renderer.result(viewOf(unsure([]), "fr", kb), "fr", WHATSAPP);
    expect(text).toBe(
      `${t("fr", "unsure")} ${t("fr", "better_photo")}\n\n${t("fr", "code_line", { code: "K7M4QX" })}`,
    );
  });

  it("healthy names the crop in words, crop_not_supported lists the crops, not_plant asks for a leaf", () => {
    const healthy = stored({
      outcome: "healthy",
      crop_health: "healthy",
      diagnoses: [],
      candidates: [{ id: "tomato__healthy", name: "Healthy tomato", confidence: 0.97 }],
    });
    expect(renderer.result(viewOf(healthy, "it", kb), "it", SMS)).toBe(
      `Pomodoro sano (molto probabile). ${t("it", "healthy")}\n${t("it", "code_line", { code: "K7M4QX" })}`,
    );
    const other = stored({
      outcome: "crop_not_supported",
      crop_health: "unknown",
      diagnoses: [],
      candidates: [],
    });
    expect(renderer.result(viewOf(other, "pt", kb), "pt", SMS)).toContain("tomate, batata, pimentão, milho");
    const notPlant = stored({
      outcome: "not_plant",
      is_plant: false,
      image_analysis: { is_plant: false, quality_issue: null, detected_crop: null },
    });
    expect(renderer.result(viewOf(notPlant, "en", kb), "en", SMS)).toBe(t("en", "not_plant"));
  });

  it("a healthy plant whose crop the texts do not know is still named in the reader's words", () => {
    const healthy = stored({
      outcome: "healthy",
      crop_health: "healthy",
      diagnoses: [],
      candidates: [{ id: "cassava__healthy", name: "Healthy cassava", confidence: 0.95 }],
    });
    expect(renderer.result(viewOf(healthy, "fr", kb), "fr", SMS)).toMatch(
      /^Plante saine \(très probable\)\. /,
    );
  });

  it("a class the knowledge base does not know is shown as unsure, never in another language", () => {
    const newer = stored();
    newer.result.diagnoses[0]!.id = "cassava__mosaic";
    const view = viewOf(newer, "sw", kb);
    expect(view).toMatchObject({ kind: "unsure", guess: undefined });
  });

  it("leaves the place an officer's follow-up goes: a flag set by the review queue", () => {
    const officerReview = () => true;
    const text = renderer.result(viewOf(unsure(), "sw", kb, { officerReview }), "sw", SMS);
    expect(text).toContain(t("sw", "officer"));
    expect(renderer.result(viewOf(unsure(), "sw", kb), "sw", SMS)).not.toContain(t("sw", "officer"));
  });
});

describe("chat rendering", () => {
  it("escapes HTML for Telegram and stays under 4096", () => {
    const huge: ViewKnowledge = {
      ...wordy,
      describe: (id, language, level) => ({
        ...kb.describe(id, language, level),
        name: "Blight <b>",
        description: "x & y. ".repeat(400),
      }),
      treatment: (ids, language, level) => ({
        ...kb.treatment(ids, language, level),
        immediate_actions: Array.from({ length: 300 }, () => "Spray < 5 g/L"),
        prevention: [],
      }),
    };
    const text = renderChat(viewOf(stored(), "en", huge), "en", t, "html", CHAT_MESSAGE_CHARS.telegram);
    expect(text.length).toBeLessThanOrEqual(CHAT_MESSAGE_CHARS.telegram);
    expect(text).toContain("<b>Blight &lt;b&gt; (likely).</b>");
    expect(text.endsWith("Result code: K7M4QX")).toBe(true);
  });

  it("stays under Twilio's 1600 for WhatsApp, name and likelihood in bold", () => {
    const text = renderChat(viewOf(stored(), "fr", wordy), "fr", t, "asterisks", CHAT_MESSAGE_CHARS.whatsapp);
    expect(text.length).toBeLessThanOrEqual(CHAT_MESSAGE_CHARS.whatsapp);
    expect(text.startsWith("*Mildiou de la tomate (probable).*")).toBe(true);
  });
});

describe("USSD screens: 160 octets, that is 182 GSM-7 septets or 80 UCS-2 units", () => {
  it("keep their options when the body is too long", () => {
    const { text } = ussdScreen(false, ["word ".repeat(100)], ["1. Next", "0. Back"]);
    expect(ussdFits(text)).toBe(true);
    expect(text.endsWith("...\n1. Next\n0. Back")).toBe(true);
  });

  it("drop optional lines whole before they would cut anything", () => {
    const { text } = ussdScreen(
      false,
      ["Required first line", { text: "an optional line ".repeat(12), optional: true }, "Code: K7M4QX"],
      ["1. Next"],
    );
    expect(text).toBe("Required first line\nCode: K7M4QX\n1. Next");
  });

  it("Swahili: GSM-7, measured in septets up to 182", () => {
    const body = "Ondoa na uchome majani yenye ugonjwa, kisha nyunyiza dawa ya shaba. ".repeat(4);
    const { text } = ussdScreen(false, [body], ["1. Endelea", "0. Rudi"]);
    expect(isGsm7(text)).toBe(true);
    expect(countUnits(text, "GSM-7")).toBeLessThanOrEqual(USSD_SCREEN["GSM-7"]);
    expect(countUnits(text, "GSM-7")).toBeGreaterThan(160);
  });

  it("extension characters take two septets each", () => {
    const { text } = ussdScreen(true, ["Dawa [shaba] ".repeat(20)]);
    expect(isGsm7(text)).toBe(true);
    expect(countUnits(text, "GSM-7")).toBeLessThanOrEqual(182);
    expect(text.length).toBeLessThan(countUnits(text, "GSM-7"));
  });

  it("French with ê or ç: UCS-2, measured in UTF-16 units up to 80", () => {
    const { text } = ussdScreen(
      false,
      ["Enlevez et brûlez les feuilles malades."],
      ["1. Suite", "0. Retour"],
    );
    expect(isGsm7(text)).toBe(false);
    expect(text).toBe("Enlevez et brûlez les feuilles malades.\n1. Suite\n0. Retour");
    expect(text.length).toBeLessThanOrEqual(USSD_SCREEN["UCS-2"]);
  });

  it("a screen too long for UCS-2 goes in GSM-7 letters (û → u) rather than lose words", () => {
    const body = "Enlevez et brûlez les feuilles malades, même les tiges.".repeat(2);
    const { text } = ussdScreen(false, [body], ["1. Suite", "0. Retour"]);
    expect(isGsm7(text)).toBe(true);
    expect(text).toBe(`${gsm7Letters(body)}\n1. Suite\n0. Retour`);
    expect(gsm7Letters("ê ç í ã ï ô â ú É é è à ñ ü")).toBe("e c i a i o a u É é è à ñ ü");
  });

  it("French within GSM-7 (é, è, à are in it) keeps the 182 septets", () => {
    const { text } = ussdScreen(true, [
      "Coupez les tiges atteintes et jetez-les à l'écart du champ. ".repeat(5),
    ]);
    expect(isGsm7(text)).toBe(true);
    expect(text.length).toBeGreaterThan(USSD_SCREEN["UCS-2"]);
    expect(countUnits(text, "GSM-7")).toBeLessThanOrEqual(182);
  });

  it("typographic apostrophes do not halve a screen", () => {
    const { text } = ussdScreen(true, ["Retirez l’herbe, puis l’arrosoir : c’est fait. ".repeat(5)]);
    expect(isGsm7(text)).toBe(true);
    expect(text).toContain("l'herbe");
  });

  it("paginates long lists into screens that fit with their options, losing no word", () => {
    const options = ["1. Suite", "0. Retour"];
    const lines = Array.from({ length: 12 }, (_, i) => `- étape ${i} : traitez la parcelle, même à ${i} h`);
    const pages = paginate(lines, options);
    expect(pages.length).toBeGreaterThan(2);
    for (const page of pages) {
      const { text } = ussdScreen(false, [page], options);
      expect(ussdFits(text)).toBe(true);
      // "même" is not GSM-7: a page longer than 80 characters goes in GSM-7 letters, whole.
      expect(text).toBe(`${gsm7Letters(page)}\n${options.join("\n")}`);
    }
    expect(pages.join("\n")).toBe(lines.join("\n"));
  });

  it("keeps a page's accents when it fits in 80 UCS-2 units", () => {
    const [page] = paginate(["- Même à 6 h."], ["1. Suite"]);
    expect(ussdScreen(false, [page!], ["1. Suite"]).text).toBe("- Même à 6 h.\n1. Suite");
  });

  it("splits a line longer than a screen between words, and never ends a page with a heading", () => {
    const options = ["1. Suite", "0. Retour"];
    const long = `- ${"brûlez les feuilles ".repeat(12).trim()}`;
    const pages = paginate(
      ["Que faire :", long, { text: "Prévention :", heading: true }, "- Espacez les plants"].map((l, i) =>
        typeof l === "string" && i === 0 ? { text: l, heading: true } : l,
      ),
      options,
    );
    for (const page of pages) {
      expect(ussdFits(ussdScreen(false, [page], options).text)).toBe(true);
      expect(page.split("\n").at(-1)).not.toMatch(/:$/);
    }
    expect(pages.join(" ").replace(/\n/g, " ")).toBe(`Que faire : ${long} Prévention : - Espacez les plants`);
  });
});

describe("an extension officer's answer on SMS", () => {
  const decided = (decision: Omit<Decision, "officer" | "at">): StoredResult => ({
    ...stored(),
    review: { reasons: ["unsure"], queuedAt: "", decision: { ...decision, officer: "amina", at: "" } },
  });

  it("answers the code and 2 with the answered disease's treatment, not the summary again", () => {
    const view = answerViewOf(
      decided({ kind: "corrected", classId: "maize__northern_leaf_blight" }),
      "en",
      kb,
    )!;
    const summary = renderer.answer(view, "en", SMS);
    const treatment = renderer.answer(view, "en", SMS, "treatment");
    expect(summary.endsWith(t("en", "code_more", { code: "K7M4QX" }))).toBe(true);
    expect(treatment).not.toBe(summary);
    const knownTreatment = kb.treatment(["maize__northern_leaf_blight"], "en", "simple");
    expect(treatment).toContain(`${t("en", "what_to_do")}: ${knownTreatment.immediate_actions[0]}`);
    expect(treatment.endsWith(t("en", "code_line", { code: "K7M4QX" }))).toBe(true);
    expect(countSegments(treatment).segments).toBeLessThanOrEqual(SMS_MAX_SEGMENTS);
  });

  it("cuts an officer's own long words between sentences, with the code by which USSD shows them whole", () => {
    const advice = "Retirez les feuilles malades et brûlez-les loin du champ. ".repeat(20).trim();
    const view = answerViewOf(decided({ kind: "answered", diagnosis: "Mildiou", advice }), "fr", kb)!;
    const text = renderer.answer(view, "fr", SMS);
    expect(countSegments(text).segments).toBeLessThanOrEqual(OFFICER_SMS_MAX_SEGMENTS);
    expect(text.startsWith(t("fr", "officer_text", { code: "K7M4QX" }))).toBe(true);
    expect(text.match(/K7M4QX/g)).toHaveLength(1);
    expect(text).toContain("Mildiou");
    expect(text).toMatch(/loin du champ\.$/);
    // A short answer goes whole.
    const short = answerViewOf(
      decided({ kind: "answered", diagnosis: "Mildiou", advice: "Arrachez les plants malades." }),
      "fr",
      kb,
    )!;
    expect(renderer.answer(short, "fr", SMS)).toContain("Arrachez les plants malades.");
  });
});
