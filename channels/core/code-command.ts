import { CODE_LENGTH, normalizeShortCode } from "../../src/results/short-code.js";

/** What a farmer asks of a stored result by text: its summary, or its treatment. */
export interface CodeRequest {
  code: string;
  part: "summary" | "treatment";
}

/** The key after a code that asks for its treatment. */
const TREATMENT_KEY = "2";

/** A key a farmer typed alone, spaces and a trailing full stop forgiven ("1", " 9. "). */
export function keyTyped(text: string): string {
  return text.trim().replace(/[.!]$/, "");
}

/** A "2" alone: the treatment the farmer's last answer offered ("send K7M4QX 2"), its code left out. */
export function asksLastTreatment(text: string): boolean {
  return keyTyped(text) === TREATMENT_KEY;
}

/**
 * "K7M4QX" asks for the summary, "K7M4QX 2" for the treatment. A "2" after the code is one key on any
 * keypad and reads the same in every language; codes are six characters, so a seventh is never part of one.
 * Anything else is not a code request, however code-like (the caller answers it with help).
 */
export function parseCodeRequest(text: string): CodeRequest | undefined {
  const compact = text.toUpperCase().replace(/[\s-]/g, "");
  const code = normalizeShortCode(compact);
  if (code) return { code, part: "summary" };
  if (compact.length !== CODE_LENGTH + 1 || !compact.endsWith(TREATMENT_KEY)) return undefined;
  const asked = normalizeShortCode(compact.slice(0, CODE_LENGTH));
  return asked ? { code: asked, part: "treatment" } : undefined;
}
