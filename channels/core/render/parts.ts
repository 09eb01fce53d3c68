import type { Language } from "../../../src/diagnosis/types.js";
import type { Texts } from "./texts.js";
import { type Band, type ResultView, sentences } from "./view.js";

/** "Tomato late blight (very likely)." in the reader's language. */
export function headline(name: string, band: Band, language: Language, t: Texts): string {
  return t(language, "diagnosis", { name, confidence: t(language, `confidence.${band}`) });
}

/** The sentence saying an extension officer will look, for answers the review queue takes. */
export function officerSentences(view: { officer: boolean }, language: Language, t: Texts): string[] {
  return view.officer ? sentences(t(language, "officer")) : [];
}

export type StatusView = Exclude<ResultView, { kind: "diagnosis" }>;

/**
 * Every answer that is not a named disease, as an optional headline and sentences: what we saw, the best
 * guess when there is one, what makes a better photo. Each channel lays them out its own way.
 */
export function statusParts(
  view: StatusView,
  language: Language,
  t: Texts,
): { headline?: string; sentences: string[] } {
  const say = (key: string, vars?: Record<string, string>) => sentences(t(language, key, vars));
  switch (view.kind) {
    case "retake":
      return { sentences: say(view.issue === "not_plant" ? "not_plant" : `quality.${view.issue}`) };
    case "no_model":
      return { sentences: say("no_model") };
    case "healthy":
      return {
        headline: headline(view.name ?? t(language, "healthy_name"), view.band, language, t),
        sentences: say("healthy"),
      };
    case "unsure":
      return {
        sentences: [
          ...(view.guess ? say("unsure_guess", { name: view.guess }) : say("unsure")),
          ...say("better_photo"),
          ...officerSentences(view, language, t),
        ],
      };
    case "crop_not_supported":
      return { sentences: [...say("crop_not_supported"), ...officerSentences(view, language, t)] };
  }
}
