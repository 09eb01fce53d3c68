import { errorChain } from "../../src/logger.js";
import { MAX_MEDIA_BYTES, PROVIDER_TIMEOUT_MS } from "../limits.js";
import { retryAfterMs } from "./retry-after.js";
import { MediaError, ProviderRateLimitError } from "./types.js";

export interface DownloadOptions {
  /** Sent to the first URL only: a redirect to a CDN must not carry our credentials with it. */
  headers?: Record<string, string>;
  maxBytes?: number;
  timeoutMs?: number;
  /** What the caller calls this URL in errors and logs (the URL itself may carry a token). */
  label: string;
  /** Whose servers these are: their 429 slows that provider's queue down. */
  provider: string;
}

export async function downloadMedia(url: string, options: DownloadOptions): Promise<Buffer> {
  const { headers, maxBytes = MAX_MEDIA_BYTES, timeoutMs = PROVIDER_TIMEOUT_MS, label, provider } = options;
  const signal = AbortSignal.timeout(timeoutMs);
  let response: Response;
  try {
    response = await fetch(url, { headers, redirect: "manual", signal });
    for (let hops = 0; isRedirect(response.status) && hops < 3; hops++) {
      const location = response.headers.get("location");
      if (!location) break;
      response = await fetch(new URL(location, url), { redirect: "manual", signal });
    }
  } catch (error) {
    // A network error or a timeout may pass: a plain error, so the queue retries the job. fetch's own
    // TypeError only says "fetch failed"; the cause says why (ENOTFOUND, ECONNREFUSED, a timeout).
    throw new Error(`${label}: download failed (${errorChain(error)})`, { cause: error });
  }
  const { status } = response;
  if (status === 429)
    throw new ProviderRateLimitError(provider, retryAfterMs(response.headers.get("retry-after")));
  // Our credentials refused (a rotated token, a wrong account): ours to fix, not the farmer's. A plain error,
  // so the job is retried, logged and, if it keeps failing, kept for `npm run jobs`.
  if (status === 401 || status === 403)
    throw new Error(`${label}: HTTP ${status}, our credentials were refused`);
  if (status >= 500) throw new Error(`${label}: HTTP ${status}`);
  // Gone or not a file: retrying will not bring it back, the user is asked to resend.
  if (!response.ok || !response.body) throw new MediaError(`${label}: HTTP ${status}`);
  const declared = Number(response.headers.get("content-length") ?? 0);
  if (declared > maxBytes)
    throw new MediaError(`${label}: ${declared} bytes is over the limit`, { tooLarge: true });

  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += chunk.byteLength;
    if (size > maxBytes) throw new MediaError(`${label}: over ${maxBytes} bytes`, { tooLarge: true });
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function isRedirect(status: number): boolean {
  return status >= 300 && status < 400;
}
