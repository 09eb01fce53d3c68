import twilio from "twilio";
import { retryAfterMs } from "../core/retry-after.js";
import { ProviderRateLimitError } from "../core/types.js";
import { PROVIDER_TIMEOUT_MS } from "../limits.js";
import { TWILIO, TWILIO_API_ROOT } from "./farmer.js";

type RequestOptions<T> = Parameters<InstanceType<typeof twilio.RequestClient>["request"]>[0] & { data?: T };

/**
 * The Twilio SDK's own extension point for its HTTP calls (a custom RequestClient, passed as `httpClient`):
 * it sends the SDK's requests to TWILIO_API_ROOT (a stand-in for tests and staging; Twilio itself by
 * default), and turns a 429 into our rate-limit error while its Retry-After header is at hand (the SDK's
 * errors drop the headers).
 */
export class TwilioHttpClient extends twilio.RequestClient {
  constructor(
    private readonly apiRoot: string,
    timeoutMs = PROVIDER_TIMEOUT_MS,
  ) {
    super({ timeout: timeoutMs });
  }

  override async request<TData>(opts: RequestOptions<TData>) {
    const uri = opts.uri.startsWith(TWILIO_API_ROOT)
      ? this.apiRoot + opts.uri.slice(TWILIO_API_ROOT.length)
      : opts.uri;
    const response = await super.request<TData>({ ...opts, uri });
    if (response.statusCode === 429) {
      const headers = (response.headers ?? {}) as Record<string, string | undefined>;
      throw new ProviderRateLimitError(TWILIO, retryAfterMs(headers["retry-after"]));
    }
    return response;
  }
}
