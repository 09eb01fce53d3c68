import type { Language } from "../../src/diagnosis/types.js";
import { isLanguage } from "./language.js";

// Each language's name as a farmer may type it in any of the six languages (accents stripped before lookup).
const NAMES: Record<Language, string[]> = {
  en: ["ENGLISH", "ANGLAIS", "KIINGEREZA", "INGLES", "INGLESE"],
  fr: ["FRENCH", "FRANCAIS", "KIFARANSA", "FRANCES", "FRANCESE"],
  sw: ["SWAHILI", "KISWAHILI", "SUAJILI", "SUAILI"],
  es: ["SPANISH", "ESPAGNOL", "KIHISPANIA", "ESPANOL", "ESPANHOL", "SPAGNOLO", "CASTELLANO"],
  pt: ["PORTUGUESE", "PORTUGAIS", "KIRENO", "PORTUGUES", "PORTOGHESE"],
  it: ["ITALIAN", "ITALIEN", "KIITALIANO", "ITALIANO"],
};
const COMMAND_WORDS = ["LANG", "LANGUAGE", "LANGUE", "LUGHA", "IDIOMA", "LINGUA"];

const byName = new Map<string, Language>();
for (const [language, names] of Object.entries(NAMES) as [Language, string[]][]) {
  for (const name of names) byName.set(name, language);
}

function fold(text: string): string {
  return text
    .normalize("NFD")
    .replace(/\p{Diacritic}/gu, "")
    .toUpperCase()
    .trim();
}

/** "LANG sw", "lugha kiswahili", "Français": the language asked for, or undefined if the text is not that. */
export function parseLanguageCommand(text: string): Language | undefined {
  const words = fold(text).split(/\s+/);
  const [first, second, ...rest] = words;
  if (!first || rest.length > 0) return undefined;
  if (second === undefined) return byName.get(first);
  if (!COMMAND_WORDS.includes(first)) return undefined;
  const code = second.toLowerCase();
  return isLanguage(code) ? code : byName.get(second);
}

/**
 * A language named in a message or a photo's caption: the whole text ("Kiswahili", "français.", "LANG sw")
 * or its first part before a separator ("Kiswahili: majani yana madoa"). `rest` is what else the farmer
 * wrote (for a photo, its description).
 */
export function languageIn(text: string): { language: Language | undefined; rest: string } {
  const whole = parseLanguageCommand(text.replace(/[.!]+\s*$/, ""));
  if (whole) return { language: whole, rest: "" };
  const lead = /^([^:,;\n]+)[:,;\n]\s*([\s\S]*)$/.exec(text);
  const language = lead ? parseLanguageCommand(lead[1]!) : undefined;
  return language ? { language, rest: lead![2]!.trim() } : { language: undefined, rest: text };
}

/** The language's own name, for menus and confirmations. */
export const NATIVE_NAMES: Record<Language, string> = {
  en: "English",
  fr: "Français",
  sw: "Kiswahili",
  es: "Español",
  pt: "Português",
  it: "Italiano",
};
