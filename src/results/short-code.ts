import { randomInt } from "node:crypto";

// Read aloud or typed on a keypad: no 0/O, 1/I/L look-alikes. 31^6 ≈ 887 million codes.
export const CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ";
export const CODE_LENGTH = 6;

export function newShortCode(): string {
  let code = "";
  for (let i = 0; i < CODE_LENGTH; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

/** What a farmer typed, as a code if it can be one ("abc 234", "ABC-234" → "ABC234"), else undefined. */
export function normalizeShortCode(input: string): string | undefined {
  const code = input.toUpperCase().replace(/[\s-]/g, "");
  if (code.length !== CODE_LENGTH) return undefined;
  for (const ch of code) if (!CODE_ALPHABET.includes(ch)) return undefined;
  return code;
}
