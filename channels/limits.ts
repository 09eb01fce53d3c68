// Every limit and constant of the farmer channels, in one place: the renderers, the providers' capability
// declarations, the worker and docs/channels.md (`npm run docs:limits`) all read them from here. The SMS
// sizes live in src/limits.ts, because the knowledge base sizes its SMS texts by them too.
import { RESULT_TTL_SECONDS, SMS_MAX_SEGMENTS, SMS_SEGMENT, SMS_SUMMARY_RESERVE } from "../src/limits.js";

/**
 * One USSD screen carries a USSD string of at most 160 octets (3GPP TS 24.080): 182 GSM-7 septets packed
 * (TS 23.038 §6.1.2.3), or 80 characters in UCS-2, which networks switch to as soon as one character of the
 * screen is outside GSM-7 (ê, ô, ç, ï...). The budget is chosen for the whole screen as it will travel.
 */
export const USSD_SCREEN = { "GSM-7": 182, "UCS-2": 80 } as const;

/** The longest message body each chat takes: Telegram's sendMessage, Twilio's WhatsApp body. */
export const CHAT_MESSAGE_CHARS = { telegram: 4096, whatsapp: 1600 } as const;

/**
 * Confidence in words (the texts `confidence.*`): a calibrated probability of at least `veryLikely` reads
 * "very likely", at least `likely` "likely", anything below "possibly". No reply states a percentage.
 */
export const CONFIDENCE_BANDS = { veryLikely: 0.9, likely: 0.7 } as const;

/** A photo not answered this long after it arrived gets "photo received" first (channels without typing). */
export const RECEIVED_NOTICE_AFTER_MS = 5_000;

/** Telegram shows a chat action for 5 s or until the next message: renewed before it lapses. */
export const TYPING_REFRESH_MS = 4_000;

/**
 * Waits between the attempts of a job that failed (a provider unreachable, a photo download refused for our
 * credentials): seven attempts over about four minutes, long enough for a provider's brief outage, short
 * enough that the farmer's later messages, which wait for this one, are not held long.
 */
export const RETRY_DELAYS_MS = [2_000, 5_000, 15_000, 30_000, 60_000, 120_000] as const;
export const JOB_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** A job whose turn has not come (an earlier message of the farmer still open) looks again this often. */
export const TURN_RECHECK_MS = 1_000;

/**
 * A job whose predecessor was chained but never reached the queue waits for it this long after its own arrival:
 * two messages of a farmer queued together can land in either order, and a webhook answered 503 after chaining
 * its message is delivered again (Telegram after 30 s). Past it the predecessor is taken as lost.
 */
export const TURN_MISSING_WAIT_MS = 60_000;

/** The largest photo fetched from a provider: the core refuses larger images anyway. */
export const MAX_MEDIA_BYTES = 10 * 1024 * 1024;

/** A photo download or provider API call that takes longer is abandoned (and the job retried). */
export const PROVIDER_TIMEOUT_MS = 15_000;

/** When a provider names no wait, or one we cannot read: long enough for a per-second limit to reset. */
export const DEFAULT_RETRY_AFTER_MS = 1_000;

/**
 * One queue carries every provider's jobs, so a pause asked by one holds the others' farmers too. A wait
 * capped here that proves too short only earns another 429 and another pause.
 */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * WhatsApp delivers a business's free-form message only within 24 hours of the user's last message; outside
 * it only an approved template goes through (Meta's customer service window).
 */
export const WHATSAPP_REPLY_WINDOW_MS = 24 * 3600 * 1000;

/**
 * A reply window is taken to close this much before its provider's: the provider counts from when the message
 * reached it, a little before it reached us, and a send takes a moment.
 */
export const REPLY_WINDOW_MARGIN_MS = 5 * 60 * 1000;

/** A reply waiting for its farmer to write again (outside the reply window) is kept this long, as results are. */
export const HELD_REPLY_TTL_S = RESULT_TTL_SECONDS;

/** Failed jobs are kept this long for `npm run jobs` to retry, then dropped: they hold a farmer's details. */
export const FAILED_JOB_TTL_S = RESULT_TTL_SECONDS;

/** Completed jobs are kept this long, so a webhook the provider retries within it is still recognised. */
export const COMPLETED_JOB_TTL_S = 24 * 3600;

/**
 * What a farmer types to answer "did this help?" (yes, or it is wrong), to refuse that their photos are kept,
 * and (twice) to have everything kept about them deleted: digits, one key on any keypad and the same in every language; the texts name them from here. Not "2"
 * for wrong: an SMS summary ends "send <code> 2" for the treatment, and a farmer who sends the 2 alone wants
 * the treatment, not to tell us the answer was wrong.
 */
export const FARMER_REPLIES = { helped: "1", wrong: "3", refusePhotos: "9", forget: "0" } as const;

const seconds = (ms: number) => (ms >= 60_000 ? `${ms / 60_000} min` : `${ms / 1000} s`);

/** The table of docs/channels.md ("Limits"), written from the values above by `npm run docs:limits`. */
export function channelLimitsTable(): string {
  const rows: [string, string, string][] = [
    [
      "SMS reply",
      `${SMS_MAX_SEGMENTS} segments`,
      `GSM-7 ${SMS_SEGMENT["GSM-7"].single} characters, or ${SMS_SEGMENT["GSM-7"].multi} per segment of a longer one; UCS-2 ${SMS_SEGMENT["UCS-2"].single}, or ${SMS_SEGMENT["UCS-2"].multi}`,
    ],
    [
      "SMS summary around the knowledge base's text",
      Object.entries(SMS_SUMMARY_RESERVE)
        .map(
          ([language, { units, encoding }]) => `${language} ${units}${encoding === "UCS-2" ? " UCS-2" : ""}`,
        )
        .join(", "),
      "units the likelihood, full stops and treatment tail add (UCS-2: their words need it); the knowledge base's SMS texts leave this room",
    ],
    [
      "USSD screen",
      `${USSD_SCREEN["GSM-7"]} GSM-7 / ${USSD_SCREEN["UCS-2"]} UCS-2`,
      "characters of one screen (160 octets), options included",
    ],
    ["Telegram message", `${CHAT_MESSAGE_CHARS.telegram} characters`, "sendMessage's limit"],
    ["WhatsApp message", `${CHAT_MESSAGE_CHARS.whatsapp} characters`, "Twilio's limit for a WhatsApp body"],
    ["“very likely”", `≥ ${CONFIDENCE_BANDS.veryLikely}`, "calibrated probability of the named disease"],
    ["“likely”", `≥ ${CONFIDENCE_BANDS.likely}`, "below: “possibly”"],
    [
      "“photo received”",
      `after ${seconds(RECEIVED_NOTICE_AFTER_MS)}`,
      "without an answer, on channels without typing",
    ],
    ["“typing”", `every ${seconds(TYPING_REFRESH_MS)}`, "renewed while a photo is diagnosed (Telegram)"],
    [
      "tries of a failed job",
      `${JOB_ATTEMPTS}`,
      `waiting ${RETRY_DELAYS_MS.map(seconds).join(", ")} between them`,
    ],
    ["a farmer's next job", `every ${seconds(TURN_RECHECK_MS)}`, "looks whether its turn came (else woken)"],
    [
      "a farmer's job whose predecessor is not queued",
      seconds(TURN_MISSING_WAIT_MS),
      "waits for it this long (a webhook delivered again), then runs",
    ],
    ["photo", `${MAX_MEDIA_BYTES / 1024 / 1024} MB`, "the largest downloaded"],
    ["provider call", `${seconds(PROVIDER_TIMEOUT_MS)}`, "a download or an API call abandoned after"],
    [
      "provider's Retry-After",
      `${seconds(DEFAULT_RETRY_AFTER_MS)} to ${seconds(MAX_RETRY_AFTER_MS)}`,
      "the pause of the whole queue after a 429",
    ],
    [
      "WhatsApp reply window",
      `${WHATSAPP_REPLY_WINDOW_MS / 3_600_000} h`,
      `after the farmer's last message, less ${seconds(REPLY_WINDOW_MARGIN_MS)} of margin; a reply outside it waits for their next one`,
    ],
    [
      "a reply waiting for its farmer",
      `${HELD_REPLY_TTL_S / 86_400} days`,
      "kept for their next message, then dropped",
    ],
    ["completed jobs", `${COMPLETED_JOB_TTL_S / 3600} h`, "kept, so a webhook delivered again is run once"],
    ["failed jobs", `${FAILED_JOB_TTL_S / 86_400} days`, "kept for `npm run jobs` to retry, then dropped"],
    [
      "farmers' replies",
      `${FARMER_REPLIES.helped} / ${FARMER_REPLIES.wrong} / ${FARMER_REPLIES.refusePhotos} / ${FARMER_REPLIES.forget}`,
      "it helped / it is wrong / do not keep my photos (where there are no buttons) / delete everything about me (sent twice)",
    ],
  ];
  return [
    "| limit | value | meaning |",
    "|---|---|---|",
    ...rows.map(([name, value, meaning]) => `| ${name} | ${value} | ${meaning} |`),
  ].join("\n");
}

/**
 * The worker writes its heartbeat file this often while its consumer runs; the liveness probe restarts one whose
 * file is older than WORKER_HEARTBEAT_STALE_MS (a stuck event loop, a consumer that stopped).
 */
export const WORKER_HEARTBEAT_MS = 10_000;
export const WORKER_HEARTBEAT_STALE_MS = 60_000;
