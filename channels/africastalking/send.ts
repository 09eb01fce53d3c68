import AfricasTalking from "africastalking";
import type { AfricasTalkingConfig } from "../../src/config.js";
import { retryAfterMs } from "../core/retry-after.js";
import { type Adapter, MediaError, PermanentJobError, ProviderRateLimitError } from "../core/types.js";

// Africa's Talking per-recipient status codes: 100-102 accepted; 405 (no balance), 406 (blacklisted),
// 403/404 (invalid number / sender id) will not change on retry; 500/501 (gateway errors) may.
const ACCEPTED = new Set([100, 101, 102]);
const RETRYABLE = new Set([500, 501]);

export function createAfricasTalkingAdapter({ config }: { config: AfricasTalkingConfig }): Adapter {
  const sms = AfricasTalking({ username: config.username, apiKey: config.apiKey }).SMS;
  return {
    provider: "africastalking",
    async send(reply) {
      let response: Awaited<ReturnType<typeof sms.send>>;
      try {
        response = await sms.send({
          to: [reply.to],
          message: reply.text,
          ...(config.senderId ? { from: config.senderId } : {}),
        });
      } catch (error) {
        throw classify(error);
      }
      const recipient = response.SMSMessageData.Recipients[0];
      if (!recipient) throw new PermanentJobError(`africastalking: ${response.SMSMessageData.Message}`);
      if (ACCEPTED.has(recipient.statusCode)) return;
      const problem = `africastalking: ${recipient.statusCode} ${recipient.status}`;
      throw RETRYABLE.has(recipient.statusCode) ? new Error(problem) : new PermanentJobError(problem);
    },
    async fetchMedia() {
      throw new MediaError("Africa's Talking SMS carries no media");
    },
  };
}

// The SDK rejects with its axios error (HTTP status) or with a validation Error (bad number: permanent).
function classify(error: unknown): unknown {
  const response = (error as { response?: { status?: number; headers?: Record<string, string> } }).response;
  const status = response?.status;
  if (status === 429)
    return new ProviderRateLimitError("africastalking", retryAfterMs(response?.headers?.["retry-after"]));
  if (status !== undefined && status >= 400 && status < 500)
    return new PermanentJobError(`africastalking: HTTP ${status}`);
  if (status === undefined && error instanceof Error && /phone number/.test(error.message)) {
    return new PermanentJobError(`africastalking: ${error.message}`);
  }
  return error;
}
