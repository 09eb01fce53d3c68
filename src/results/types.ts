import type { DiagnosisResult, Language } from "../diagnosis/types.js";

/** Routing keys a partner may put in `user_data` (design.md) to have the result sent to the farmer. */
export interface Routing {
  channel: "sms" | "whatsapp" | "telegram";
  /** E.164, for sms and whatsapp. */
  phone?: string;
  /** Telegram chat id, for telegram. */
  chatId?: string;
}

export interface StoredResult {
  result: DiagnosisResult;
  /** Short code a farmer types on USSD/SMS to find this result again. */
  code: string;
  language: Language;
  /** Phone number or chat the result belongs to, when it came from (or was routed to) a farmer. */
  owner?: string;
  createdAt: string;
}

/**
 * Called by the REST route after every successful diagnosis: stores the result for look-ups and, when
 * routing keys are present, queues its delivery to the farmer. The HTTP response does not wait on delivery.
 */
export type ResultSink = (
  result: DiagnosisResult,
  language: Language,
  routing: Routing | undefined,
) => Promise<void>;
