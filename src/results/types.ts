import type { DiagnosisResult, Language } from "../diagnosis/types.js";
import type { StoredPhoto } from "./photos.js";

/** Routing keys a partner may put in `user_data` (design.md) to have the result sent to the farmer. */
export interface Routing {
  channel: "sms" | "whatsapp" | "telegram";
  /** E.164, for sms and whatsapp. */
  phone?: string;
  /** Telegram chat id, for telegram. */
  chatId?: string;
}

/** Where a photo came in: the REST API, the staff console, or a farmer channel. */
export const SOURCES = ["api", "console", "whatsapp", "mms", "sms", "telegram", "ussd"] as const;
export type Source = (typeof SOURCES)[number];

/**
 * How to reach the farmer in the conversation the photo came from (an officer's answer goes there). The
 * channel core fills it in; the names are its own (provider and channel kinds), kept opaque here.
 */
export interface ReturnAddress {
  provider: string;
  channel: string;
  /** The farmer's address on that provider (phone number or chat id). */
  to: string;
  /** Our number the farmer wrote to, so the answer comes from it. */
  from?: string;
}

export const REVIEW_REASONS = [
  "unsure",
  "crop_not_supported",
  "low_confidence",
  "farmer_said_wrong",
] as const;
export type ReviewReason = (typeof REVIEW_REASONS)[number];

export const DECISIONS = ["confirmed", "corrected", "answered"] as const;
export type DecisionKind = (typeof DECISIONS)[number];

/** What an officer answered: the model was right, another class, or a diagnosis and advice in their words. */
export interface Decision {
  kind: DecisionKind;
  /** The class the photo shows (confirmed or corrected); absent for a free-text answer. */
  classId?: string;
  /** Free text, sent to the farmer as written. */
  diagnosis?: string;
  advice?: string;
  officer: string;
  at: string;
}

export interface Review {
  reasons: ReviewReason[];
  queuedAt: string;
  decision?: Decision;
}

/** The farmer's answer to "did this help?". */
export interface Feedback {
  helped: boolean;
  at: string;
}

/** Everything about one diagnosis besides its result: who sent it, from where, what became of it. */
export interface ResultMeta {
  source?: Source;
  /** Name of the API key whose request made it: the only key that may read it back. */
  client?: string;
  /** The staff member who made it from the console. */
  staff?: string;
  /** The region as given with the photo (free text). */
  regionText?: string;
  /** The outbreak view's region: an ISO country code, a named group, or "unknown". */
  region?: string;
  /** The farmer's caption or description. */
  note?: string;
  crop?: string;
  /** A photo is stored with the result (same lifetime). */
  photo?: boolean;
  replyTo?: ReturnAddress;
  /** A REST result's routing keys: where its delivery (and an officer's answer) goes. */
  routing?: Routing;
  /** Consent to keep the photo, when it came with the photo (the console's checkbox). */
  consent?: { basis: "staff_recorded" | "partner_attested"; at: string };
  review?: Review;
  feedback?: Feedback;
}

export interface StoredResult extends ResultMeta {
  result: DiagnosisResult;
  /** Short code a farmer types on USSD/SMS to find this result again. */
  code: string;
  language: Language;
  /** Phone number or chat the result belongs to, when it came from (or was routed to) a farmer. */
  owner?: string;
  createdAt: string;
}

/** What a diagnosis request brought besides the photo's verdict. */
export interface Submission {
  language: Language;
  routing?: Routing;
  /** The upload, or the photo being prepared for keeping (preparePhoto: the REST route runs it in the upload's
   *  turn, so that the CPU and memory it takes are bounded with the upload's own; the result is stored first). */
  photo?: Buffer | Promise<StoredPhoto>;
  source: Source;
  client?: string;
  staff?: string;
  region?: string;
  note?: string;
  crop?: string;
  consent?: ResultMeta["consent"];
}

/**
 * Called by the REST route after every successful diagnosis: stores the result with its photo for look-ups,
 * review and partners, and, when routing keys are present, queues its delivery to the farmer. The HTTP
 * response does not wait on it.
 */
export type ResultSink = (result: DiagnosisResult, submission: Submission) => Promise<void>;
