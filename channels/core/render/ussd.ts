import { countUnits, isGsm7, plainPunctuation, type SmsEncoding } from "./sms-segments.js";

/**
 * What one USSD screen carries: the USSD string is at most 160 octets (3GPP TS 24.080, ussd-String), that is
 * 182 GSM-7 septets packed (TS 23.038 §6.1.2.3) or 80 characters in UCS-2, which networks use as soon as one
 * character is outside GSM-7. The `CON `/`END ` prefix is Africa's Talking's protocol, not shown.
 */
export const USSD_LIMITS: Record<SmsEncoding, number> = { "GSM-7": 182, "UCS-2": 80 };

export type UssdReply = `CON ${string}` | `END ${string}`;

/** Whether a screen's text fits, measured in the units of the encoding it will travel in. */
export function ussdFits(text: string): boolean {
  const encoding: SmsEncoding = isGsm7(text) ? "GSM-7" : "UCS-2";
  return countUnits(text, encoding) <= USSD_LIMITS[encoding];
}

/**
 * One screen: the body first, the numbered options last. The options are what the user needs to carry on,
 * so when the screen is too small the body is shortened (at a word), never the options. Typographic
 * punctuation is made plain first: alone it would switch a screen to UCS-2 and cut its room by half.
 */
export function ussdScreen(kind: "CON" | "END", body: string, options: string[] = []): UssdReply {
  const footer = plainPunctuation(options.join("\n"));
  return `${kind} ${fitScreen(plainPunctuation(body.trim()), footer)}`;
}

function compose(body: string, footer: string): string {
  return [body, footer].filter(Boolean).join("\n");
}

function fitScreen(body: string, footer: string): string {
  if (ussdFits(compose(body, footer))) return compose(body, footer);
  let cut = body;
  while (cut && !ussdFits(compose(`${cut}...`, footer))) cut = dropLastWord(cut);
  return compose(cut ? `${cut}...` : "", footer);
}

// A word at a time; a single word longer than the screen a character at a time (never half a surrogate pair).
function dropLastWord(text: string): string {
  const atWord = text.lastIndexOf(" ");
  if (atWord > 0) return text.slice(0, atWord).trimEnd();
  return [...text].slice(0, -1).join("");
}

/**
 * Packs lines into pages that each fit one screen together with `options` (plain punctuation, as shown).
 * A line longer than a screen gets a page to itself, which ussdScreen then shortens.
 */
export function paginate(lines: string[], options: string[]): string[] {
  const footer = plainPunctuation(options.join("\n"));
  const pages: string[] = [];
  let page = "";
  for (const line of lines.map(plainPunctuation)) {
    const next = page ? `${page}\n${line}` : line;
    if (!page || ussdFits(compose(next, footer))) {
      page = next;
    } else {
      pages.push(page);
      page = line;
    }
  }
  if (page) pages.push(page);
  return pages;
}
