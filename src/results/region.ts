import { parsePhoneNumberFromString } from "libphonenumber-js";
import { resolveRegion } from "../diagnosis/knowledge/regions.js";

/**
 * The outbreak view's region of a diagnosis: the region given with the photo (an ISO country code when it
 * names one country, else the group or place as written), else the country of the farmer's phone number,
 * else "unknown".
 */
export function regionOf(regionText: string | undefined, owner: string | undefined): string {
  const text = regionText?.trim();
  if (text) {
    const resolved = resolveRegion(text);
    if (resolved?.codes.length === 1) return resolved.codes[0]!;
    return resolved ? resolved.label : text.slice(0, 60);
  }
  const country = owner?.startsWith("+") ? parsePhoneNumberFromString(owner)?.country : undefined;
  return country ?? "unknown";
}
