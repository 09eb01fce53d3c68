import { randomInt } from "node:crypto";

// Read off a small screen and typed on a keypad: no 0/O, 1/I/L, 2/Z, 5/S or 8/B look-alikes (the digit of
// each pair stays). Of the 28^6 strings, the ≈418 million with a digit are codes.
export const CODE_ALPHABET = "23456789ACDEFGHJKMNPQRTUVWXY";
export const CODE_LENGTH = 6;

const DIGIT = /[2-9]/;
const SHAPE = new RegExp(`^[${CODE_ALPHABET}]{${CODE_LENGTH}}$`);

/** A fresh code with at least one digit, so no code is ever a word a farmer might text (ASANTE, MERCI). */
export function newShortCode(): string {
  for (;;) {
    let code = "";
    for (let i = 0; i < CODE_LENGTH; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
    if (DIGIT.test(code)) return code;
  }
}

/** What a farmer typed, as a code if it has a code's shape ("k7m 4qx", "K7M-4QX" → "K7M4QX"), else undefined. */
export function normalizeShortCode(input: string): string | undefined {
  const code = input.toUpperCase().replace(/[\s-]/g, "");
  return SHAPE.test(code) && DIGIT.test(code) ? code : undefined;
}
