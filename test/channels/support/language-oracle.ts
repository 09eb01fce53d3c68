// Which language a line a farmer reads is in. Every text the service sends is built from the six languages'
// resources (channel texts, the knowledge base's names and advice, its notes), so a line is in a language
// when each of its words is a word of that language's resources. A word from another language's resources
// that this one does not use ("Mildiou" on a Swahili screen, "Treatment" in a French SMS) fails the line.
import { readFileSync } from "node:fs";
import path from "node:path";
import { NATIVE_NAMES } from "../../../channels/core/language-names.js";
import { ROOT_DIR } from "../../../src/config.js";
import { LANGUAGES, type Language } from "../../../src/diagnosis/types.js";

type Tree = string | Tree[] | { [key: string]: Tree };

function strings(tree: Tree): string[] {
  if (typeof tree === "string") return [tree];
  if (Array.isArray(tree)) return tree.flatMap(strings);
  return Object.values(tree).flatMap(strings);
}

// Accents folded, so a USSD screen written in GSM-7 letters (ê → e) reads as the same words.
const fold = (text: string) =>
  text
    .normalize("NFD")
    .replace(/\p{Diacritic}/gu, "")
    .toLowerCase();

/** The words of a line: letters only, with result codes (K7M4QX), markup and placeholders taken out. */
export function wordsOf(line: string): string[] {
  const bare = line
    .replace(/<[^>]+>/g, " ")
    .replace(/&(amp|lt|gt);/g, " ")
    .replace(/{{\w+}}/g, " ")
    .replace(/\b(?=[A-Z2-9]*[2-9])[A-Z2-9]{6}\b/g, " ");
  return fold(bare).match(/\p{L}+/gu) ?? [];
}

const vocabulary = new Map<Language, Set<string>>(
  LANGUAGES.map((language) => {
    const words = new Set<string>();
    for (const file of ["channels", "diseases", "notes"]) {
      const tree = JSON.parse(
        readFileSync(path.join(ROOT_DIR, "locales", language, `${file}.json`), "utf8"),
      ) as Tree;
      for (const text of strings(tree)) for (const word of wordsOf(text)) words.add(word);
    }
    // Language menus and buttons show every language by its own name.
    for (const name of Object.values(NATIVE_NAMES)) for (const word of wordsOf(name)) words.add(word);
    return [language, words];
  }),
);

/** The words of `line` that are not words of `language` (empty: the line is in that language). */
export function foreignWords(line: string, language: Language): string[] {
  const words = vocabulary.get(language)!;
  return wordsOf(line).filter((word) => !words.has(word));
}
