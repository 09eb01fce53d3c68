// Every USSD screen the menu can show, for every class of the knowledge base, every likelihood and every
// language: each fits its screen budget (182 GSM-7 septets or 80 UCS-2 units, chosen for the whole screen),
// no text is cut (no "..."), the result code is on the result screen and on the last treatment page, and no
// heading ends a page with its items on the next.
import { describe, expect, it } from "vitest";
import { createTexts } from "../../channels/core/render/texts.js";
import { type UssdScreen, ussdFits, ussdScreens } from "../../channels/core/render/ussd.js";
import { type Band, viewOf } from "../../channels/core/render/view.js";
import { CONFIDENCE_BANDS } from "../../channels/limits.js";
import { createKnowledge } from "../../src/diagnosis/kb.js";
import { CLASS_IDS } from "../../src/diagnosis/knowledge/entries.js";
import { LANGUAGES, type Language } from "../../src/diagnosis/types.js";
import { gsm7Letters } from "../../src/text/sms-segments.js";
import { resultFixture } from "./support/fixtures.js";

const kb = await createKnowledge();
const t = createTexts();
const CODE = "K7M4QX";
const BANDS: [Band, number][] = [
  ["very_likely", 1],
  ["likely", CONFIDENCE_BANDS.likely],
  ["possibly", 0.5],
];
const diseases = CLASS_IDS.filter((id) => !kb.isHealthy(id));
// A screen too long for UCS-2 travels in GSM-7 letters (ê → e): compared that way on both sides.
const plain = (text: string) => gsm7Letters(text.replace(/[’]/g, "'"));

function checked(screen: UssdScreen): string {
  expect(ussdFits(screen.text), screen.text).toBe(true);
  expect(screen.text, "nothing is cut").not.toContain("...");
  return plain(screen.text);
}

function diagnosis(classId: string, confidence: number, language: Language) {
  const result = resultFixture();
  result.diagnoses[0]!.id = classId;
  result.diagnoses[0]!.confidence = confidence;
  return viewOf({ result, code: CODE, language: "en", createdAt: "" }, language, kb);
}

describe.each(LANGUAGES)("USSD in %s", (language) => {
  const screens = ussdScreens(t, language);
  const say = (key: string, vars?: Record<string, string>) => plain(t(language, key, vars));

  it("menus: main (also after an invalid choice), code entry, languages with their prompt whole", () => {
    for (const invalid of [false, true]) {
      const menu = checked(screens.menu(invalid));
      expect(menu.endsWith(`3. ${say("ussd.language")}`)).toBe(true);
      expect(menu).toContain(say("ussd.menu"));
    }
    expect(checked(screens.enterCode("ZZ9ZZZ"))).toContain(say("code_not_found", { code: "ZZ9ZZZ" }));
    const languages = checked(screens.languages());
    // The six names in their own spelling: the prompt fits beside them in UCS-2's 80 characters.
    expect(screens.languages().text).toBe(
      `${t(language, "ussd.choose_language")}\n1.English\n2.Français\n3.Kiswahili\n4.Español\n5.Português\n6.Italiano`,
    );
    expect(languages).toContain(say("ussd.choose_language"));
    expect(checked(screens.languages(true))).toContain("6.Italiano");
    for (const key of ["no_result", "ussd.error"]) expect(checked(screens.message(key))).toBe(say(key));
  });

  it.each(diseases)("%s: result screen and treatment pages, at every likelihood", (classId) => {
    for (const [band, confidence] of BANDS) {
      const view = diagnosis(classId, confidence, language);
      if (view.kind !== "diagnosis") throw new Error("expected a diagnosis");
      expect(view.band).toBe(band);
      const result = checked(screens.result(view));
      const headline = say("diagnosis", { name: view.name, confidence: t(language, `confidence.${band}`) });
      expect(result.startsWith(`${headline}\n`), result).toBe(true);
      expect(result).toContain(`\n${say("ussd.code", { code: CODE })}\n`);
      expect(result.endsWith(`1. ${say("ussd.treatment")}\n0. ${say("ussd.back")}`)).toBe(true);
      expect(checked(screens.result(view, true))).toContain(say("ussd.code", { code: CODE }));

      const pages: string[] = [];
      for (let page = 0; page < 30; page++) {
        const screen = screens.treatment(view, page);
        pages.push(checked(screen));
        if (screen.end) break;
        expect(screen.text.endsWith(`1. ${say("ussd.next")}\n0. ${say("ussd.back")}`)).toBe(true);
      }
      expect(screens.treatment(view, pages.length - 1).end).toBe(true);
      const bodies = pages.map((page, i) =>
        i === pages.length - 1 ? page : page.split("\n").slice(0, -2).join("\n"),
      );
      const headings = ["what_to_do", "prevention"].map((k) => say("heading", { title: t(language, k) }));
      for (const body of bodies) expect(headings, body).not.toContain(body.split("\n").at(-1));
      expect(pages.at(-1)!.endsWith(say("ussd.code", { code: CODE }))).toBe(true);
      // Every item whole and in order, whatever page breaks fell inside it.
      const shown = bodies.join(" ").replace(/\n/g, " ");
      const urgency = say(`urgency.${view.urgency}`);
      expect(result.includes(urgency) || shown.startsWith(urgency)).toBe(true);
      const items = [
        say("heading", { title: t(language, "what_to_do") }),
        ...view.actions.map((a) => `- ${plain(a)}`),
        say("heading", { title: t(language, "prevention") }),
        ...view.prevention.map((p) => `- ${plain(p)}`),
      ];
      expect(shown).toContain(items.join(" "));
    }
  });

  it.each(CLASS_IDS)("%s as the best guess of an unsure result, and healthy crops", (classId) => {
    const unsure = resultFixture({
      outcome: "unsure",
      crop_health: "unknown",
      diagnoses: [],
      candidates: [{ id: classId, name: classId, confidence: 0.4 }],
    });
    const screen = screens.result(
      viewOf({ result: unsure, code: CODE, language, createdAt: "" }, language, kb),
    );
    expect(screen.end).toBe(true);
    const text = checked(screen);
    expect(text.startsWith(say("unsure_guess", { name: kb.name(classId, language) }))).toBe(true);
    expect(text.endsWith(say("ussd.code", { code: CODE }))).toBe(true);
    if (kb.isHealthy(classId)) {
      const healthy = resultFixture({
        outcome: "healthy",
        crop_health: "healthy",
        diagnoses: [],
        candidates: [{ id: classId, name: classId, confidence: 0.95 }],
      });
      const shown = checked(
        screens.result(viewOf({ result: healthy, code: CODE, language, createdAt: "" }, language, kb)),
      );
      expect(
        shown.startsWith(
          say("diagnosis", {
            name: kb.name(classId, language),
            confidence: t(language, "confidence.very_likely"),
          }),
        ),
      ).toBe(true);
      expect(shown.endsWith(say("ussd.code", { code: CODE }))).toBe(true);
    }
  });
});
