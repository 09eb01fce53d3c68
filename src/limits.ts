import { availableParallelism } from "node:os";
import type { Language } from "./diagnosis/types.js";
import type { SmsEncoding } from "./text/sms-segments.js";

/**
 * The service's tunable limits: timeouts, capacity and how long a webhook may wait on Redis. Each is named,
 * bounded and explained once, here: src/config.ts reads them from the environment with these defaults and
 * bounds, and docs/api.md shows the table `limitsTable()` renders (test/api/limits-docs.test.ts keeps the
 * two equal; `npm run docs:limits` rewrites the table).
 */
export interface Limit {
  env: string;
  default: number;
  min: number;
  max: number;
  /** One sentence for the docs: what it bounds, and why the default. */
  doc: string;
}

/** The cores this process may use: the capacity defaults here and the thread counts (src/threads.ts) follow it. */
export const CORES = availableParallelism();

/** libuv's pool runs the photo decodes; it must hold as many as there are photos in flight (its default is 4). */
export const THREADPOOL_SIZE = Math.max(4, 2 * CORES);

export const LIMITS = {
  requestTimeoutMs: {
    env: "REQUEST_TIMEOUT_MS",
    default: 60_000,
    min: 1_000,
    max: 600_000,
    doc:
      "Milliseconds a client has to send a whole request, headers and body: a slower upload is cut with 408. " +
      "A 10 MB photo needs about 1.4 Mbit/s to make it; the headers alone get at most 30 s.",
  },
  idleTimeoutMs: {
    env: "IDLE_TIMEOUT_MS",
    default: 30_000,
    min: 1_000,
    max: 600_000,
    doc:
      "Milliseconds a connection may stay silent while the client is sending a request or reading an answer; " +
      "the time the service itself works on a request does not count.",
  },
  uploadsInFlight: {
    env: "UPLOADS_IN_FLIGHT",
    default: Math.max(2, CORES * 2),
    min: 1,
    max: 256,
    doc:
      "Photos read into memory and decoded at once (default: twice the cores). Further uploads wait, unread, " +
      "in the kernel's socket buffers, so memory does not grow with the number of clients.",
  },
  uploadsWaiting: {
    env: "UPLOADS_WAITING",
    default: 256,
    min: 0,
    max: 10_000,
    doc:
      "Uploads that may wait for a turn; one more is answered 503 with Retry-After at once, and one that waits " +
      "longer than the busy wait (10 s) too.",
  },
} as const satisfies Record<string, Limit>;

/** How long an upload may wait for its turn before it is told to come back (503 with Retry-After). */
export const UPLOAD_WAIT_MS = 10_000;

/**
 * How long a provider webhook waits on Redis before it answers "busy": providers give up after a few seconds
 * (a USSD gateway sooner), so every webhook answers within a second even with Redis down.
 */
export const WEBHOOK_REDIS_BUDGET_MS = 500;

/**
 * How long a request waits on Redis for its rate limit: a Redis that holds the connection open but stops
 * answering (a stalled server, a half-open connection) would otherwise hold every request there; past it, the
 * request is limited per instance, as with an unreachable Redis.
 */
export const RATE_LIMIT_REDIS_WAIT_MS = 1_000;

/** Seconds a provider that honours Retry-After is asked to wait before delivering a webhook again. */
export const REDELIVERY_SECONDS = 30;

/** Messages of a provider that never delivers again (Africa's Talking SMS) kept in memory while Redis is down. */
export const OUTBOX_MAX_MESSAGES = 10_000;
/** How often the outbox tries Redis again while it holds messages (besides at once when Redis reconnects). */
export const OUTBOX_RETRY_MS = 5_000;

/** Checking for timed-out requests this often keeps a cut within a second of its limit (Node's default: 30 s). */
export const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/** The headers part of REQUEST_TIMEOUT_MS: a client that has not sent its headers by then never will. */
export const HEADERS_TIMEOUT_MAX_MS = 30_000;

/** docs/api.md's table of these limits (between `<!-- limits:start -->` and `<!-- limits:end -->`). */
export function limitsTable(): string {
  const rows = Object.values(LIMITS).map((l: Limit) => {
    const fallback = l === LIMITS.uploadsInFlight ? "2 × cores, at least 2" : String(l.default);
    return `| \`${l.env}\` | ${fallback} | ${l.min}–${l.max} | ${l.doc} |`;
  });
  return ["| Variable | Default | Range | Meaning |", "|---|---|---|---|", ...rows].join("\n");
}

// ---- SMS: the farmer channels send it, the knowledge base writes its texts to fit it ----
/** SMS segment sizes as networks bill them (3GPP TS 23.038): GSM-7 septets or UCS-2 code units. */
export const SMS_SEGMENT = {
  "GSM-7": { single: 160, multi: 153 },
  "UCS-2": { single: 70, multi: 67 },
} as const;

/** A farmer's "delete everything about me" must be sent again within this long to take effect. */
export const FORGET_CONFIRM_SECONDS = 10 * 60;

/** An SMS reply is at most this many segments: a farmer pays for each one, and long texts are not read. */
export const SMS_MAX_SEGMENTS = 3;

/**
 * An extension officer's own words on SMS, cut between sentences past this many segments (ANSWER_MAX_CHARS
 * bounds characters, not segments: 1,400 of them with one accent would be 22): USSD shows the whole answer.
 */
export const OFFICER_SMS_MAX_SEGMENTS = 6;

/**
 * What the SMS summary adds around the knowledge base's SMS core (src/diagnosis/knowledge/sms-core.ts), per
 * language: the likelihood in words after the name, "(molto probabile)", the full stops closing the actions,
 * and the tail on its own line, "Trattamento: invia K7M4QX 2". `units` is the most it adds. `encoding` "UCS-2"
 * marks a language whose added words are outside GSM-7 (an "í" in the tail, an "á" in the likelihood): every
 * summary in it travels in UCS-2, also one whose core alone would not. The channel texts are written in GSM-7
 * letters for that reason (Spanish "escriba", Portuguese "muito provavelmente"), so that a core in GSM-7 keeps
 * its 3 × 153 characters. The core's texts leave this room in the three segments. Measured from the renderer
 * and the channel texts by test/channels/kb-sms.test.ts, which fails with the values to put here when they
 * change.
 */
export const SMS_SUMMARY_RESERVE: Record<Language, { units: number; encoding: SmsEncoding }> = {
  en: { units: 41, encoding: "GSM-7" },
  fr: { units: 48, encoding: "GSM-7" },
  sw: { units: 45, encoding: "GSM-7" },
  es: { units: 47, encoding: "GSM-7" },
  pt: { units: 51, encoding: "GSM-7" },
  it: { units: 48, encoding: "GSM-7" },
};

// ---- The expert loop: results kept, staff console, review queue, outbreak view ----
/** Results, their photos and short codes live 30 days (a re-save renews them). */
export const RESULT_TTL_SECONDS = 30 * 24 * 3600;
/** Results indexed per farmer (phone number or chat) for the console's look-up. */
export const RESULTS_PER_OWNER = 50;
/** Messages kept per farmer in the delivery log the console shows. */
export const SENT_LOG_ENTRIES = 100;

/**
 * Stored photos are re-encoded as JPEG with at most this many pixels on the long side. 1000, not 1024: a
 * 4000-pixel phone photo then shrinks by 4 while it is decoded (libjpeg's scaled IDCT) instead of by 2, which
 * takes a quarter of the memory (3 MB instead of 9 MB per photo in flight) and less CPU.
 */
export const PHOTO_MAX_SIDE = 1000;
export const PHOTO_JPEG_QUALITY = 82;
/**
 * Photo bytes held in memory when the service runs without Redis (kept photos and labelled examples, each up
 * to this): about 1,200 kept JPEGs of a 12 MP upload, or 15 HEICs kept as sent.
 */
export const MEMORY_PHOTO_BYTES = 64 * 1024 * 1024;

/** A "diagnosed" result whose top confidence is under this goes to the review queue. */
export const LOW_CONFIDENCE = 0.6;
/** Cases the review queue page lists (the oldest); its header counts them all. */
export const REVIEW_PAGE_CASES = 50;
/** How long an officer's claim on a case lasts without being renewed (opening the case renews it). */
export const CLAIM_SECONDS = 10 * 60;
/** Who claimed a case last may still answer it this long after, if nobody took it (a long, interrupted answer). */
export const LAST_HOLDER_SECONDS = 24 * 3600;
/**
 * An officer's answer whose follow-up (the decision on the result, the outbreak count, the labelled example, the
 * message to the farmer) failed part-way is taken up again this often by the API, one process at a time.
 */
export const SETTLE_RETRY_MS = 60_000;
/** An answer younger than this is still being finished by the request that made it: the rounds leave it. */
export const SETTLE_AFTER_MS = 10_000;
/** What the officer is told: a failed follow-up is taken up by the first round at least SETTLE_AFTER_MS after it. */
export const SETTLE_WITHIN_MINUTES = Math.ceil((SETTLE_RETRY_MS + SETTLE_AFTER_MS) / 60_000);
/** A follow-up that fails gives its lease back at once; this bounds one whose process died holding it. */
export const SETTLE_LEASE_SECONDS = 5 * 60;
/** Longest free-text diagnosis and advice an officer may send (chat channels carry it whole). */
export const ANSWER_MAX_CHARS = { diagnosis: 200, advice: 1200 } as const;

/** Staff sessions end after this long without a request. */
export const SESSION_IDLE_SECONDS = 8 * 3600;
/**
 * A visitor who is not signed in has a session only for the sign-in form's CSRF secret: it lasts this long,
 * and without Redis such sessions are kept apart from staff sessions, so that anyone opening the sign-in page
 * many times can neither sign staff out nor fill Redis for a working day.
 */
export const ANONYMOUS_SESSION_SECONDS = 3600;
/** Sessions kept in memory when the service runs without Redis, each kind (staff, not signed in). */
export const MEMORY_SESSIONS = 10_000;
/**
 * Failed sign-ins allowed in SIGN_IN_WINDOW_SECONDS: per address, per user name from one address, and per user
 * name from every address together (high enough that nobody locks an officer out alone).
 */
export const SIGN_IN_ATTEMPTS = { perIp: 20, perIpUser: 5, perUser: 50 } as const;
export const SIGN_IN_WINDOW_SECONDS = 15 * 60;
/** A sign-in attempt's charge is refunded (it succeeded, or was refused unchecked) only this far from its window's end. */
export const SIGN_IN_REFUND_MARGIN_MS = 5_000;
export const PASSWORD_MIN_LENGTH = 12;

/** Outbreak view: weeks shown, and the surge rule (this week ≥ factor × mean of the 4 before, and ≥ min). */
export const OUTBREAK_WEEKS = 12;
export const SURGE_BASELINE_WEEKS = 4;
export const SURGE_FACTOR = 2;
export const SURGE_MIN_COUNT = 5;
/** Weekly outbreak counters are kept about a year. */
export const OUTBREAK_TTL_SECONDS = 400 * 24 * 3600;

/** docs/console.md's table of the expert loop's rules (between `<!-- console-limits:start` and `:end -->`). */
export function expertLoopTable(): string {
  const days = (seconds: number) => `${Math.round(seconds / 86_400)} days`;
  const rows: [string, string][] = [
    ["Results, their photos and short codes are kept", days(RESULT_TTL_SECONDS)],
    ["Stored photos: longest side, JPEG quality", `${PHOTO_MAX_SIDE} px, ${PHOTO_JPEG_QUALITY}`],
    ["Photos held in memory without Redis (newest kept)", `${MEMORY_PHOTO_BYTES / 1024 / 1024} MiB`],
    ["A diagnosis goes to review when its confidence is under", `${Math.round(LOW_CONFIDENCE * 100)} %`],
    ["An officer's claim on a case lasts (renewed when the case is opened)", `${CLAIM_SECONDS / 60} minutes`],
    ["Cases listed on the review queue page (the oldest; the header counts all)", String(REVIEW_PAGE_CASES)],
    [
      "Free-text answer: diagnosis, advice",
      `${ANSWER_MAX_CHARS.diagnosis}, ${ANSWER_MAX_CHARS.advice} characters`,
    ],
    [
      "Free-text answer on SMS: cut between sentences after (the whole answer on USSD)",
      `${OFFICER_SMS_MAX_SEGMENTS} segments`,
    ],
    ["A staff session ends after this long without a request", `${SESSION_IDLE_SECONDS / 3600} hours`],
    [
      "Failed sign-ins before a pause, per address / per user name from one address / per user name",
      `${SIGN_IN_ATTEMPTS.perIp} / ${SIGN_IN_ATTEMPTS.perIpUser} / ${SIGN_IN_ATTEMPTS.perUser} in ${SIGN_IN_WINDOW_SECONDS / 60} minutes`,
    ],
    ["Shortest staff password", `${PASSWORD_MIN_LENGTH} characters`],
    ['A farmer\'s second "0" deletes everything about them within', `${FORGET_CONFIRM_SECONDS / 60} minutes`],
    [
      "Diagnoses per farmer listed by the look-up; messages in their log",
      `${RESULTS_PER_OWNER}; ${SENT_LOG_ENTRIES}`,
    ],
    ["Outbreak view: weeks shown by default", String(OUTBREAK_WEEKS)],
    [
      "Surge: this week at least … × the mean of the weeks before, and at least … cases",
      `${SURGE_FACTOR} × the mean of ${SURGE_BASELINE_WEEKS} weeks, ${SURGE_MIN_COUNT} cases`,
    ],
  ];
  return ["| Rule | Value |", "|---|---|", ...rows.map(([rule, value]) => `| ${rule} | ${value} |`)].join(
    "\n",
  );
}
