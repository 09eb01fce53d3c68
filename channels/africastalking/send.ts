import type { AfricasTalkingConfig } from "../../src/config.js";
import { SMS_MAX_SEGMENTS } from "../../src/limits.js";
import { retryAfterMs } from "../core/retry-after.js";
import {
  type Adapter,
  type Capabilities,
  MediaError,
  PermanentJobError,
  ProviderRateLimitError,
} from "../core/types.js";
import { PROVIDER_TIMEOUT_MS } from "../limits.js";
import { AFRICAS_TALKING } from "./farmer.js";

const CAPABILITIES: Capabilities = {
  text: { kind: "sms", maxSegments: SMS_MAX_SEGMENTS },
  buttons: false,
  typing: false,
  media: false,
};

// Africa's Talking per-recipient status codes: 100-102 accepted; 405 (no balance), 406 (blacklisted),
// 403/404 (invalid number / sender id) will not change on retry; 500/501 (gateway errors) may.
const ACCEPTED = new Set([100, 101, 102]);
const RETRYABLE = new Set([500, 501]);

interface SmsResponse {
  SMSMessageData?: { Message?: string; Recipients?: { statusCode: number; status: string }[] };
}

export interface AfricasTalkingAdapterDeps {
  config: AfricasTalkingConfig;
  /** AT_API_ROOT: Africa's Talking's API (its sandbox for the "sandbox" application), or a stand-in. */
  apiRoot: string;
  /** A send abandoned after (PROVIDER_TIMEOUT_MS). */
  timeoutMs?: number;
}

/**
 * SMS through Africa's Talking's REST API (POST /version1/messaging), called directly: its Node SDK has no
 * way to set the API host (its URLs are module constants, its requests go through a shared axios) nor a
 * timeout, and sending one SMS is one form POST.
 */
export function createAfricasTalkingAdapter({
  config,
  apiRoot,
  timeoutMs = PROVIDER_TIMEOUT_MS,
}: AfricasTalkingAdapterDeps): Adapter {
  const url = `${apiRoot.replace(/\/+$/, "")}/version1/messaging`;
  return {
    provider: AFRICAS_TALKING,
    capabilities: () => CAPABILITIES,
    async send(reply) {
      // A reply goes out from the short code the farmer wrote to, so that they can answer it (a code's "2");
      // what we start (a routed result) from the configured sender.
      const from = reply.from ?? config.senderId;
      let response: Response;
      try {
        response = await fetch(url, {
          method: "POST",
          headers: { apiKey: config.apiKey, accept: "application/json" },
          body: new URLSearchParams({
            username: config.username,
            to: reply.to,
            message: reply.text,
            ...(from ? { from } : {}),
          }),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        // Unreachable or too slow: a plain error, so the queue retries the job.
        throw new Error(`africastalking: send failed (${(error as Error).name})`);
      }
      if (response.status === 429)
        throw new ProviderRateLimitError(AFRICAS_TALKING, retryAfterMs(response.headers.get("retry-after")));
      if (response.status >= 400 && response.status < 500)
        throw new PermanentJobError(`africastalking: HTTP ${response.status}`);
      if (!response.ok) throw new Error(`africastalking: HTTP ${response.status}`);
      const body = (await response.json().catch(() => ({}))) as SmsResponse;
      const recipient = body.SMSMessageData?.Recipients?.[0];
      if (!recipient)
        throw new PermanentJobError(`africastalking: ${body.SMSMessageData?.Message ?? "no recipient"}`);
      if (ACCEPTED.has(recipient.statusCode)) return;
      const problem = `africastalking: ${recipient.statusCode} ${recipient.status}`;
      throw RETRYABLE.has(recipient.statusCode) ? new Error(problem) : new PermanentJobError(problem);
    },
    async fetchMedia() {
      throw new MediaError("Africa's Talking SMS carries no media");
    },
  };
}
