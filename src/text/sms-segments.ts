import { SMS_SEGMENT } from "../limits.js";

// GSM 03.38 default alphabet and its extension table: networks bill a message by these rules,
// so a reply's cost is only predictable if we count exactly as they do.
const GSM7_BASIC =
  "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà";
const GSM7_EXTENSION = "\f^{}\\[~]|€";

const basic = new Set(GSM7_BASIC);
const extension = new Set(GSM7_EXTENSION);

export type SmsEncoding = "GSM-7" | "UCS-2";

export interface SegmentCount {
  encoding: SmsEncoding;
  /** Septets (GSM-7) or UTF-16 code units (UCS-2) the text occupies. */
  units: number;
  segments: number;
  /** Units still free in the last segment. */
  remaining: number;
}

export function encodingOf(text: string): SmsEncoding {
  return isGsm7(text) ? "GSM-7" : "UCS-2";
}

export function isGsm7(text: string): boolean {
  for (const ch of text) {
    if (!basic.has(ch) && !extension.has(ch)) return false;
  }
  return true;
}

/**
 * The text in GSM-7 letters: each letter outside it written without its accent (ê, ç, í, ã, ï → e, c, i, a, i;
 * é, è, à, ñ, ü are GSM-7 and stay). A USSD screen or an SMS gets this only when it carries more so (UCS-2
 * holds less than half as much): a word without its accent reads better than a sentence cut off.
 */
export function gsm7Letters(text: string): string {
  let out = "";
  for (const ch of text) {
    if (isGsm7(ch)) out += ch;
    else {
      const bare = ch.normalize("NFD").replace(/\p{Diacritic}/gu, "");
      out += bare && isGsm7(bare) ? bare : ch;
    }
  }
  return out;
}

/** Length of one character in the encoding's units: extension characters take an escape septet too. */
export function unitLength(ch: string, encoding: SmsEncoding): number {
  if (encoding === "GSM-7") return extension.has(ch) ? 2 : 1;
  return ch.length;
}

export function countUnits(text: string, encoding: SmsEncoding): number {
  let units = 0;
  for (const ch of text) units += unitLength(ch, encoding);
  return units;
}

/**
 * Segments as billed. `within` is the encoding of the message the text goes out in: "UCS-2" when words added
 * to it need UCS-2, so the text is counted in UCS-2 even if it would fit GSM-7 alone.
 */
export function countSegments(text: string, within: SmsEncoding = "GSM-7"): SegmentCount {
  const encoding = within === "UCS-2" ? within : encodingOf(text);
  const units = countUnits(text, encoding);
  const { single, multi } = SMS_SEGMENT[encoding];
  if (units <= single) return { encoding, units, segments: units === 0 ? 0 : 1, remaining: single - units };
  const { segments, lastUsed } = packSegments(text, encoding, multi);
  return { encoding, units, segments, remaining: multi - lastUsed };
}

// An escape pair or a surrogate pair is never split across two segments by handsets and gateways, so a
// character that does not fit in what is left of a segment starts the next one (the gap stays unused).
function packSegments(text: string, encoding: SmsEncoding, perSegment: number) {
  let segments = 1;
  let lastUsed = 0;
  for (const ch of text) {
    const len = unitLength(ch, encoding);
    if (lastUsed + len > perSegment) {
      segments += 1;
      lastUsed = 0;
    }
    lastUsed += len;
  }
  return { segments, lastUsed };
}

export function fitsInSegments(text: string, segments: number): boolean {
  return countSegments(text).segments <= segments;
}

// Typographic punctuation from translations would alone switch a whole reply to UCS-2 (70 instead of 160
// characters per segment): plain equivalents read the same on a handset.
const PLAIN_PUNCTUATION: Record<string, string> = {
  "\u2018": "'",
  "\u2019": "'",
  "\u201C": '"',
  "\u201D": '"',
  "\u00AB": '"',
  "\u00BB": '"',
  "\u2013": "-",
  "\u2014": "-",
  "\u2026": "...",
  "\u00A0": " ",
  "\u202F": " ",
};

export function plainPunctuation(text: string): string {
  return text.replace(
    /[\u2018\u2019\u201C\u201D\u00AB\u00BB\u2013\u2014\u2026\u00A0\u202F]/g,
    (ch) => PLAIN_PUNCTUATION[ch] ?? ch,
  );
}
