import { SMS_CORE_ACTIONS } from "../../../src/diagnosis/knowledge/sms-core.js";
import type { Language } from "../../../src/diagnosis/types.js";
import { countSegments, gsm7Letters, plainPunctuation } from "../../../src/text/sms-segments.js";
import { headline, officerSentences, type StatusView, statusParts } from "./parts.js";
import type { Texts } from "./texts.js";
import { asSentence, isAnswer, type ResultView, sentences } from "./view.js";

/**
 * Keeps the longest run of leading sentences that, with the tail, fits in `maxSegments`: a reply is cut
 * between sentences, never inside one, and the tail (the short code) always survives. One letter outside
 * GSM-7 (ê, ç, ã) makes the whole message UCS-2, 67 characters a segment instead of 153: when the same
 * sentences in GSM-7 letters (gsm7Letters) carry more of them, those are sent.
 */
export function fitSentences(parts: string[], tail: string, maxSegments: number): string {
  return fitCounted(parts, tail, maxSegments).text;
}

/** fitSentences, and how many of the parts it kept. */
function fitCounted(parts: string[], tail: string, maxSegments: number): { text: string; kept: number } {
  const written = fitted(parts, tail, maxSegments);
  if (written.kept === parts.length) return written;
  const folded = fitted(parts.map(gsm7Letters), gsm7Letters(tail), maxSegments);
  return folded.kept > written.kept ? folded : written;
}

function fitted(parts: string[], tail: string, maxSegments: number): { text: string; kept: number } {
  const compose = (n: number) => [parts.slice(0, n).join(" "), tail].filter(Boolean).join("\n");
  let kept = 0;
  while (kept < parts.length && countSegments(plainPunctuation(compose(kept + 1))).segments <= maxSegments)
    kept++;
  // Even the first sentence is too long: cut it at a word, so the farmer still gets the name.
  if (kept === 0 && parts[0]) return { text: plainPunctuation(cutToFit(parts[0], tail, maxSegments)), kept };
  return { text: plainPunctuation(compose(kept)), kept };
}

function cutToFit(sentence: string, tail: string, maxSegments: number): string {
  const words = sentence.split(" ");
  while (
    words.length > 1 &&
    countSegments(plainPunctuation(`${words.join(" ")}...\n${tail}`)).segments > maxSegments
  ) {
    words.pop();
  }
  return `${words.join(" ")}...\n${tail}`;
}

/**
 * The answer to a photo and to its code: what it is and how likely, how urgent, what it means, what to do
 * first; the tail says how to get the treatment. After the name comes the knowledge base's SMS core
 * (description, first actions: src/diagnosis/knowledge/sms-core.ts), which its authors keep within three
 * segments with the room SMS_SUMMARY_RESERVE leaves, so a cut falls after it, and "an officer will look" where
 * the review queue has the case. The urgency ("act today: it spreads fast") follows the name only where all of
 * that still fits with it (that room was not sized for it); later actions give way (the treatment has them).
 * Any other answer ends with its result code.
 */
export function renderSmsSummary(
  view: ResultView,
  language: Language,
  t: Texts,
  maxSegments: number,
): string {
  if (view.kind !== "diagnosis") return renderSmsStatus(view, language, t, maxSegments);
  const name = headline(view.name, view.band, language, t);
  // "An officer will look" comes right after the core: a farmer acting on a doubtful answer must know it.
  const core = [
    ...sentences(view.description),
    ...view.actions.slice(0, SMS_CORE_ACTIONS).map(asSentence),
    ...officerSentences(view, language, t),
  ];
  const rest = view.actions.slice(SMS_CORE_ACTIONS).map(asSentence);
  const tail = t(language, "code_more", { code: view.code });
  const urgent = fitCounted(
    [name, t(language, `urgency.${view.urgency}`), ...core, ...rest],
    tail,
    maxSegments,
  );
  if (urgent.kept >= 2 + core.length) return urgent.text;
  return fitSentences([name, ...core, ...rest], tail, maxSegments);
}

/** The answer to "code 2": the treatment, for a farmer who already has the summary. */
export function renderSmsTreatment(
  view: ResultView,
  language: Language,
  t: Texts,
  maxSegments: number,
): string {
  if (view.kind !== "diagnosis") return renderSmsStatus(view, language, t, maxSegments);
  return fitSentences(
    treatmentSentences(view, language, t),
    t(language, "code_line", { code: view.code }),
    maxSegments,
  );
}

/** A named condition's treatment as sentences: its name, what to do, what prevents it. */
export function treatmentSentences(
  view: { name: string; actions: string[]; prevention: string[] },
  language: Language,
  t: Texts,
): string[] {
  return [
    `${view.name}.`,
    ...headed(t(language, "heading", { title: t(language, "what_to_do") }), view.actions),
    ...headed(t(language, "heading", { title: t(language, "prevention") }), view.prevention),
  ];
}

// The heading rides with the first item, so a cut never leaves a heading with nothing under it.
function headed(heading: string, items: string[]): string[] {
  return items.map((item, i) => (i === 0 ? `${heading} ${asSentence(item)}` : asSentence(item)));
}

function renderSmsStatus(view: StatusView, language: Language, t: Texts, maxSegments: number): string {
  const parts = statusParts(view, language, t);
  const tail = isAnswer(view) ? t(language, "code_line", { code: view.code }) : "";
  return fitSentences([...(parts.headline ? [parts.headline] : []), ...parts.sentences], tail, maxSegments);
}

/** Any fixed text (help, please resend) sized for SMS. */
export function renderSmsText(text: string, maxSegments: number): string {
  return fitSentences(sentences(text), "", maxSegments);
}
