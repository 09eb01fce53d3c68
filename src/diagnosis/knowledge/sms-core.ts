import { SMS_MAX_SEGMENTS, SMS_RESERVED_UNITS } from "../../limits.js";
import { countSegments, type SegmentCount } from "../../text/sms-segments.js";

export interface SimpleTexts {
  description: string;
  immediate_actions: string[];
}

/**
 * The part of a `simple` entry an SMS user always receives: name, description and the first two actions.
 * Written as the renderer joins them, so the budget measured here is the one paid on the network.
 */
export function smsCore(name: string, simple: SimpleTexts): string {
  const [first, second] = simple.immediate_actions;
  return `${name}. ${simple.description} ${first ?? ""} ${second ?? ""}`;
}

export interface SmsBudget extends SegmentCount {
  fits: boolean;
}

/** Whether the core fits in three segments with SMS_RESERVED_UNITS to spare, in whichever encoding it needs. */
export function smsBudget(text: string): SmsBudget {
  // Padding with plain characters counts exactly as the renderer's additions will (segment packing included).
  const padded = countSegments(`${text}${"0".repeat(SMS_RESERVED_UNITS)}`);
  return { ...countSegments(text), fits: padded.segments <= SMS_MAX_SEGMENTS };
}
