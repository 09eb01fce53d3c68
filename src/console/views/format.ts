import type { PageContext } from "../context.js";

/** A date and time where the console's staff work, with the zone's name: "Nov 29, 2026, 01:40 PM GMT+3" in English. */
export function formatWhen(iso: string | Date, ctx: Pick<PageContext, "lang" | "timeZone">): string {
  return new Intl.DateTimeFormat(ctx.lang, {
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    timeZone: ctx.timeZone,
    timeZoneName: "short",
  }).format(new Date(iso));
}

/** A time of today where the console's staff work, with the zone's name: "01:40 PM GMT+3" in English. */
export function formatTime(at: Date, ctx: Pick<PageContext, "lang" | "timeZone">): string {
  return new Intl.DateTimeFormat(ctx.lang, {
    hour: "2-digit",
    minute: "2-digit",
    timeZone: ctx.timeZone,
    timeZoneName: "short",
  }).format(at);
}

export function formatAge(iso: string, ctx: Pick<PageContext, "t">, now = Date.now()): string {
  const minutes = Math.max(1, Math.round((now - Date.parse(iso)) / 60_000));
  if (minutes < 120) return ctx.t("ago.minutes", { count: minutes });
  const hours = Math.round(minutes / 60);
  if (hours < 48) return ctx.t("ago.hours", { count: hours });
  return ctx.t("ago.days", { count: Math.round(hours / 24) });
}

/** An ISO country code as the country's name in the page's language; other regions as written. */
export function regionName(
  region: string | undefined,
  ctx: Pick<PageContext, "lang" | "t">,
): string | undefined {
  if (!region) return undefined;
  if (region === "unknown") return ctx.t("outbreaks.unknown_region");
  if (/^[A-Z]{2}$/.test(region)) {
    try {
      return new Intl.DisplayNames([ctx.lang], { type: "region" }).of(region) ?? region;
    } catch {
      return region;
    }
  }
  return region;
}

/** A language's own name ("Kiswahili", "Français"), from ICU: the same in every page language. */
export function languageName(language: string): string {
  const name = new Intl.DisplayNames([language], { type: "language" }).of(language) ?? language;
  return name.charAt(0).toLocaleUpperCase(language) + name.slice(1);
}
