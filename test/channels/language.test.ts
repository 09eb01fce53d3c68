import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { createLanguageMemory, languageFromPhone, languageFromTag } from "../../channels/core/language.js";
import { parseLanguageCommand } from "../../channels/core/language-names.js";

describe("first-contact language", () => {
  it.each([
    ["+254712345678", "sw"],
    ["+255712345678", "sw"],
    ["+256712345678", "sw"],
    ["+221771234567", "fr"],
    ["+2250712345678", "fr"],
    ["+33612345678", "fr"],
    ["+5511987654321", "pt"],
    ["+258841234567", "pt"],
    ["+5215512345678", "es"],
    ["+573001234567", "es"],
    ["+393331234567", "it"],
    ["+14155550100", undefined],
  ])("%s → %s", (phone, language) => {
    expect(languageFromPhone(phone)).toBe(language);
  });

  it("reads Telegram's IETF tags", () => {
    expect(languageFromTag("pt-br")).toBe("pt");
    expect(languageFromTag("fr")).toBe("fr");
    expect(languageFromTag("de")).toBeUndefined();
    expect(languageFromTag(undefined)).toBeUndefined();
  });
});

describe("language commands", () => {
  it.each([
    ["LANG sw", "sw"],
    ["lang FR", "fr"],
    ["KISWAHILI", "sw"],
    ["Français", "fr"],
    ["FRANCAIS", "fr"],
    ["english", "en"],
    ["ESPAÑOL", "es"],
    ["Português", "pt"],
    ["italiano", "it"],
    ["lugha kiingereza", "en"],
    ["langue anglais", "en"],
    ["idioma inglés", "en"],
    ["LANG de", undefined],
    ["hello there friend", undefined],
    ["ABC234", undefined],
  ])("%j → %s", (text, language) => {
    expect(parseLanguageCommand(text)).toBe(language);
  });
});

describe("language memory (real Redis)", () => {
  const redis = new Redis("redis://127.0.0.1:6379");
  const prefix = `test-lang-${process.pid}-${Date.now()}:`;
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  it("uses the hint until the user picks, then the pick", async () => {
    const memory = createLanguageMemory(redis, prefix);
    expect(await memory.resolve("+254712345678", { phone: "+254712345678" })).toBe("sw");
    expect(await memory.resolve("tg:42", { tag: "it-IT" })).toBe("it");
    expect(await memory.resolve("tg:43", {})).toBe("en");
    await memory.set("+254712345678", "fr");
    expect(await memory.resolve("+254712345678", { phone: "+254712345678" })).toBe("fr");
  });
});
