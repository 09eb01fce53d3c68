import { SMS_MAX_SEGMENTS, SMS_SUMMARY_RESERVE } from "../../limits.js";
import { countSegments, type SegmentCount } from "../../text/sms-segments.js";
import type { Language } from "../types.js";

export interface SimpleTexts {
  description: string;
  immediate_actions: string[];
}

/** The actions of a `simple` entry an SMS summary always carries. */
export const SMS_CORE_ACTIONS = 2;

/**
 * The part of a `simple` entry an SMS user always receives: name, description and the first actions.
 * Written as the renderer joins them, so the budget measured here is the one paid on the network.
 */
export function smsCore(name: string, simple: SimpleTexts): string {
  return `${name}. ${simple.description} ${simple.immediate_actions.slice(0, SMS_CORE_ACTIONS).join(" ")}`;
}

export interface SmsBudget extends SegmentCount {
  fits: boolean;
}

/**
 * Whether the core fits in three segments with what the summary adds in its language (limits.ts
 * SMS_SUMMARY_RESERVE), in the encoding the summary travels in: the core's own, or UCS-2 where the added
 * words need it.
 */
export function smsBudget(
  text: string,
  language: Language,
  { units, encoding } = SMS_SUMMARY_RESERVE[language],
): SmsBudget {
  // Plain padding counts as the renderer's additions will, segment packing included.
  const padded = countSegments(`${text}${"0".repeat(units)}`, encoding);
  return { ...countSegments(text, encoding), fits: padded.segments <= SMS_MAX_SEGMENTS };
}
