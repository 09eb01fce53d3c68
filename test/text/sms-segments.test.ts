import { describe, expect, it } from "vitest";
import { countSegments, isGsm7, plainPunctuation } from "../../src/text/sms-segments.js";

const FRENCH_70 = "Reçu : traitez la parcelle au cuivre ce soir, et revenez sous 7 jours.";

describe("SMS segment counting (GSM 03.38 / UCS-2, as networks bill)", () => {
  it.each([
    ["", "GSM-7", 0, 0],
    ["Hello", "GSM-7", 5, 1],
    ["a".repeat(160), "GSM-7", 160, 1],
    ["a".repeat(161), "GSM-7", 161, 2],
    ["a".repeat(306), "GSM-7", 306, 2],
    ["a".repeat(307), "GSM-7", 307, 3],
    ["a".repeat(459), "GSM-7", 459, 3],
    ["a".repeat(460), "GSM-7", 460, 4],
    // Extension table: an escape septet each.
    ["€".repeat(80), "GSM-7", 160, 1],
    ["€".repeat(81), "GSM-7", 162, 2],
    ["[{}]".repeat(20), "GSM-7", 160, 1],
    ["[".repeat(80), "GSM-7", 160, 1],
    ["[".repeat(81), "GSM-7", 162, 2],
    // 159 plain characters and a euro sign: 161 septets, so two segments although it is 160 characters.
    [`${"a".repeat(159)}€`, "GSM-7", 161, 2],
    // Accents of the basic table stay GSM-7; ç and ê do not.
    ["Déjà vu à Noël? Ñandú, Ävä, Øre", "UCS-2", 31, 1],
    ["Ça", "GSM-7", 2, 1],
    // A French sentence of 70 characters: its ç (only the capital Ç is GSM-7) makes it UCS-2, one segment;
    // one character more and it is two.
    [FRENCH_70, "UCS-2", 70, 1],
    [`${FRENCH_70}!`, "UCS-2", 71, 2],
    ["ç".repeat(70), "UCS-2", 70, 1],
    ["ç".repeat(71), "UCS-2", 71, 2],
    ["ç".repeat(134), "UCS-2", 134, 2],
    ["ç".repeat(135), "UCS-2", 135, 3],
    // Surrogate pairs: two UTF-16 units each.
    ["🌱".repeat(35), "UCS-2", 70, 1],
    ["🌱".repeat(36), "UCS-2", 72, 2],
  ])("%j → %s, %i units, %i segments", (text, encoding, units, segments) => {
    const count = countSegments(text);
    expect(count).toMatchObject({ encoding, units, segments });
  });

  it("does not split an escape pair across segments", () => {
    // 152 septets, then € (2) does not fit in the 153 left: it opens segment 2.
    const count = countSegments(`${"a".repeat(152)}€${"a".repeat(10)}`);
    expect(count).toEqual({ encoding: "GSM-7", units: 164, segments: 2, remaining: 153 - 12 });
  });

  it("does not split a surrogate pair across segments", () => {
    // 33 emoji fill 66 of 67 units; the 34th cannot take the last unit alone.
    const count = countSegments("🌱".repeat(36));
    expect(count).toEqual({ encoding: "UCS-2", units: 72, segments: 2, remaining: 67 - 6 });
  });

  it("knows the whole basic table, and its look-alikes that are not in it", () => {
    expect(isGsm7("@£$¥èéùìòÇØøÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ¤¡ÄÖÑÜ§¿äöñüà")).toBe(true);
    expect(isGsm7("ç")).toBe(false);
    expect(isGsm7("â")).toBe(false);
    expect(isGsm7("’")).toBe(false);
  });

  it("plain punctuation keeps an English reply in GSM-7", () => {
    const typographic = "It’s late blight – act now… “today”";
    expect(countSegments(typographic).encoding).toBe("UCS-2");
    expect(plainPunctuation(typographic)).toBe('It\'s late blight - act now... "today"');
    expect(countSegments(plainPunctuation(typographic)).encoding).toBe("GSM-7");
  });
});
