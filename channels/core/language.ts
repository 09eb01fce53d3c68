import type { Redis } from "ioredis";
import { type CountryCode, parsePhoneNumberFromString } from "libphonenumber-js";
import { LANGUAGES, type Language } from "../../src/diagnosis/types.js";

// First contact, before the user picks: the language most farmers of that country read.
const COUNTRY_LANGUAGE: Partial<Record<CountryCode, Language>> = {
  KE: "sw",
  TZ: "sw",
  UG: "sw",
  RW: "sw",
  CD: "fr",
  BI: "fr",
  FR: "fr",
  BE: "fr",
  SN: "fr",
  CI: "fr",
  CM: "fr",
  BF: "fr",
  ML: "fr",
  NE: "fr",
  TD: "fr",
  TG: "fr",
  BJ: "fr",
  GN: "fr",
  MG: "fr",
  GA: "fr",
  CG: "fr",
  CF: "fr",
  HT: "fr",
  MA: "fr",
  DZ: "fr",
  TN: "fr",
  BR: "pt",
  PT: "pt",
  MZ: "pt",
  AO: "pt",
  GW: "pt",
  CV: "pt",
  ST: "pt",
  ES: "es",
  MX: "es",
  AR: "es",
  CO: "es",
  PE: "es",
  CL: "es",
  EC: "es",
  BO: "es",
  GT: "es",
  HN: "es",
  NI: "es",
  SV: "es",
  PY: "es",
  UY: "es",
  VE: "es",
  DO: "es",
  CU: "es",
  CR: "es",
  PA: "es",
  GQ: "es",
  IT: "it",
  SM: "it",
};

export function isLanguage(value: string): value is Language {
  return (LANGUAGES as readonly string[]).includes(value);
}

/** Telegram sends IETF tags ("pt-br", "fr"): only the primary subtag matters here. */
export function languageFromTag(tag: string | undefined): Language | undefined {
  const primary = tag?.toLowerCase().split(/[-_]/)[0] ?? "";
  return isLanguage(primary) ? primary : undefined;
}

export function languageFromPhone(phone: string): Language | undefined {
  const country = parsePhoneNumberFromString(phone)?.country;
  return country ? COUNTRY_LANGUAGE[country] : undefined;
}

export interface LanguageMemory {
  /** The user's pick if they made one, else Telegram's hint, else the phone's country, else English. */
  resolve(owner: string, hints?: { tag?: string; phone?: string }): Promise<Language>;
  set(owner: string, language: Language): Promise<void>;
  forget(owner: string): Promise<void>;
}

const ONE_YEAR_SECONDS = 365 * 24 * 3600;

export function createLanguageMemory(redis: Redis, prefix = "cd:"): LanguageMemory {
  const key = (owner: string) => `${prefix}lang:${owner}`;
  return {
    async resolve(owner, hints = {}) {
      const saved = await redis.get(key(owner));
      if (saved && isLanguage(saved)) return saved;
      return languageFromTag(hints.tag) ?? (hints.phone ? languageFromPhone(hints.phone) : undefined) ?? "en";
    },
    async set(owner, language) {
      await redis.set(key(owner), language, "EX", ONE_YEAR_SECONDS);
    },
    async forget(owner) {
      await redis.del(key(owner));
    },
  };
}
