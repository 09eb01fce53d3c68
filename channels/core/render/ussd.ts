import { LANGUAGES, type Language } from "../../../src/diagnosis/types.js";
import { countUnits, encodingOf, gsm7Letters, plainPunctuation } from "../../../src/text/sms-segments.js";
import { USSD_SCREEN } from "../../limits.js";
import { NATIVE_NAMES } from "../language-names.js";
import type { AnswerView } from "./answer.js";
import { headline, officerSentences, statusParts } from "./parts.js";
import type { Texts } from "./texts.js";
import { isAnswer, type ResultView } from "./view.js";

/** One USSD screen: `end` closes the session (the gateway's protocol says how, e.g. Africa's Talking's END). */
export interface UssdScreen {
  end: boolean;
  text: string;
}

/**
 * A line of a screen. `optional` lines are dropped whole, last first, when the screen is too small; a
 * `heading` never ends a page with its items on the next.
 */
export interface ScreenLine {
  text: string;
  optional?: boolean;
  heading?: boolean;
}

/** Whether a screen's text fits, measured in the units of the encoding the whole screen will travel in. */
export function ussdFits(text: string): boolean {
  const encoding = encodingOf(text);
  return countUnits(text, encoding) <= USSD_SCREEN[encoding];
}

/** The screen as it will travel: with its accents when it fits so, else in GSM-7 letters; undefined if neither fits. */
function fitting(text: string): string | undefined {
  if (ussdFits(text)) return text;
  const folded = gsm7Letters(text);
  return ussdFits(folded) ? folded : undefined;
}

const compose = (lines: string[]) => lines.filter(Boolean).join("\n");
const plain = (lines: (string | ScreenLine)[]): ScreenLine[] =>
  lines
    .map((line) => (typeof line === "string" ? { text: line } : line))
    .map((line) => ({
      ...line,
      text: plainPunctuation(line.text.trim()),
    }));

/**
 * One screen: the lines first, the numbered options last. The options are what the user needs to carry on
 * and are always kept. A screen too long for its budget is written in GSM-7 letters (gsm7Letters), then loses
 * its optional lines, whole. Typographic punctuation is made plain first: alone it would switch a screen to
 * UCS-2 and cut its room by half. Texts are written to fit (test/channels/ussd-screens.test.ts renders every
 * one): only a required line too long for any screen would be shortened, at a word.
 */
export function ussdScreen(end: boolean, lines: (string | ScreenLine)[], options: string[] = []): UssdScreen {
  const footer = options.map(plainPunctuation);
  const kept = plain(lines);
  const text = () => compose([...kept.map((l) => l.text), ...footer]);
  for (let i = kept.length - 1; i >= 0 && !fitting(text()); i--) if (kept[i]!.optional) kept.splice(i, 1);
  for (let cuttable = kept.filter((l) => l.text.includes(" ")); !fitting(text()) && cuttable.length; ) {
    const longest = cuttable.reduce((a, b) => (b.text.length > a.text.length ? b : a));
    longest.text = `${longest.text.replace(/\.\.\.$/, "").replace(/\s+\S+$/, "")}...`;
    cuttable = kept.filter((l) => l.text.includes(" "));
  }
  return { end, text: fitting(text()) ?? gsm7Letters(text()) };
}

/**
 * Packs lines into pages that each fit one screen together with `options` (the last page, which ends the
 * session, without them), as ussdScreen will send it: a page too long for UCS-2 goes in GSM-7 letters, so
 * an accented word does not halve the room of its page (fewer screens to page through). A line too long
 * for what is left of a page continues on the next one, split between words; a heading that would end a
 * page moves to the next one, with its first item.
 */
export function paginate(lines: (string | ScreenLine)[], options: string[]): string[] {
  const footer = options.map(plainPunctuation);
  const fits = (page: ScreenLine[], withOptions = true) =>
    fitting(compose([...page.map((l) => l.text), ...(withOptions ? footer : [])])) !== undefined;
  const pages: ScreenLine[][] = [];
  let page: ScreenLine[] = [];
  const onlyHeadings = () => page.every((l) => l.heading);
  const close = () => {
    const carried: ScreenLine[] = [];
    while (page.length > 1 && page.at(-1)?.heading) carried.unshift(page.pop()!);
    pages.push(page);
    page = carried;
  };
  for (const line of plain(lines)) {
    if (fits([...page, line])) {
      page.push(line);
      continue;
    }
    if (!onlyHeadings() && fits([line])) {
      close();
      if (fits([...page, line])) {
        page.push(line);
        continue;
      }
    }
    // Too long for what is left of this page: as many words as fit here, the rest on the next pages.
    let rest = line.text.split(" ");
    while (rest.length > 0) {
      let take = rest.length;
      while (take > 1 && !fits([...page, { text: rest.slice(0, take).join(" ") }])) take--;
      if (!fits([...page, { text: rest.slice(0, take).join(" ") }]) && !onlyHeadings()) {
        close();
        continue;
      }
      page.push({ ...line, text: rest.slice(0, take).join(" ") });
      rest = rest.slice(take);
      if (rest.length > 0) close();
    }
  }
  if (page.length) pages.push(page);
  // The last page needs no options: what was pushed onto a page of its own may fit on the one before.
  const last = pages.at(-1);
  const before = pages.at(-2);
  if (last && before && fits([...before, ...last], false)) pages.splice(-2, 2, [...before, ...last]);
  return pages.map((p) => compose(p.map((l) => l.text)));
}

/** The USSD screens of the menu, in one language. */
export function ussdScreens(t: Texts, language: Language) {
  const say = (key: string, vars?: Record<string, string | number>) => t(language, key, vars);
  const back = `0. ${say("ussd.back")}`;
  const next = `1. ${say("ussd.next")}`;
  const invalidLine = (invalid: boolean): ScreenLine[] =>
    invalid ? [{ text: say("ussd.invalid"), optional: true }] : [];
  const codeLine = (code: string) => say("ussd.code", { code });
  const items = (title: string, list: string[]): ScreenLine[] =>
    list.length
      ? [{ text: say("heading", { title }), heading: true }, ...list.map((item) => ({ text: `- ${item}` }))]
      : [];
  // Page `page` (from 0) of paginated text: the last one ends the session.
  const pageOf = (pages: string[], page: number): UssdScreen => {
    const last = pages.length - 1;
    const shown = Math.min(page, last);
    return shown === last
      ? ussdScreen(true, [pages[shown] ?? ""])
      : ussdScreen(false, [pages[shown] ?? ""], [next, back]);
  };

  // The urgency goes on the result screen when it fits there, else first on the treatment pages.
  const resultLines = (view: Extract<ResultView, { kind: "diagnosis" }>) => ({
    headline: headline(view.name, view.band, language, t),
    urgency: say(`urgency.${view.urgency}`),
    code: codeLine(view.code),
  });
  const resultOptions = [`1. ${say("ussd.treatment")}`, back];
  const urgencyFits = (view: Extract<ResultView, { kind: "diagnosis" }>) => {
    const { headline: h, urgency, code } = resultLines(view);
    return (
      fitting(
        compose(
          plain([h, urgency, code])
            .map((l) => l.text)
            .concat(resultOptions),
        ),
      ) !== undefined
    );
  };

  return {
    menu: (invalid = false) =>
      ussdScreen(
        false,
        [...invalidLine(invalid), say("ussd.menu")],
        [`1. ${say("ussd.last")}`, `2. ${say("ussd.by_code")}`, `3. ${say("ussd.language")}`],
      ),

    enterCode: (notFound?: string) =>
      ussdScreen(
        false,
        [...(notFound ? [say("code_not_found", { code: notFound })] : []), say("ussd.enter_code")],
        [back],
      ),

    // The six names in their own spelling (ç, ê) make this screen UCS-2: 80 characters, so the options are
    // written tight and the prompt is a short one of its own (all six are checked to fit whole).
    languages: (invalid = false) =>
      ussdScreen(
        false,
        [...invalidLine(invalid), { text: say("ussd.choose_language"), optional: invalid }],
        LANGUAGES.map((lang, i) => `${i + 1}.${NATIVE_NAMES[lang]}`),
      ),

    message: (key: string, vars?: Record<string, string | number>) => ussdScreen(true, [say(key, vars)]),

    /** The answer a result gives on USSD: a diagnosis offers its treatment, anything else ends the session. */
    result(view: ResultView, invalid = false): UssdScreen {
      if (view.kind === "diagnosis") {
        const { headline: h, urgency, code } = resultLines(view);
        const lines: ScreenLine[] = [...invalidLine(invalid), { text: h }];
        if (urgencyFits(view)) lines.push({ text: urgency });
        return ussdScreen(false, [...lines, { text: code }], resultOptions);
      }
      const parts = statusParts(view, language, t);
      return ussdScreen(true, [
        ...(parts.headline ? [{ text: parts.headline }] : []),
        ...parts.sentences.map((text, i) => ({ text, optional: i > 0 })),
        ...(isAnswer(view) ? [{ text: codeLine(view.code) }] : []),
      ]);
    },

    /**
     * An extension officer's answer, page `page` (from 0): what they said it is, then what to do; the last page
     * ends the session with the result code.
     */
    answer(view: AnswerView, page: number, invalid = false): UssdScreen {
      const lines: (string | ScreenLine)[] =
        view.kind === "text"
          ? [say("officer_text", { code: view.code }), view.diagnosis, view.advice]
          : [
              say("officer_class", { code: view.code, name: view.name }),
              ...items(say("what_to_do"), view.actions),
              ...items(say("prevention"), view.prevention),
            ];
      const pages = paginate(
        [...invalidLine(invalid && page === 0), ...lines, codeLine(view.code)],
        [next, back],
      );
      return pageOf(pages, page);
    },

    /** Treatment page `page` (from 0); the last one ends the session with the result code. */
    treatment(view: ResultView, page: number): UssdScreen {
      if (view.kind !== "diagnosis") return this.result(view);
      const pages = paginate(
        [
          ...(urgencyFits(view) ? [] : [say(`urgency.${view.urgency}`)]),
          ...items(say("what_to_do"), view.actions),
          ...items(say("prevention"), view.prevention),
          ...officerSentences(view, language, t),
          codeLine(view.code),
        ],
        // Sized for the options of a middle page, so every page fits whichever options it ends up with.
        [next, back],
      );
      return pageOf(pages, page);
    },
  };
}
