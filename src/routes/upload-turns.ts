import { BusyError } from "../diagnosis/diagnoser.js";
import { BUSY_RETRY_SECONDS } from "../diagnosis/model/pool.js";

/**
 * Turns for uploads: at most `inFlight` photos are read into memory and diagnosed at once. The others wait
 * with their bodies unread, in the kernel's socket buffers, which is what keeps the process's memory flat
 * under 64 clients as under 4. A full waiting line, or a wait past `maxWaitMs`, is a BusyError (503).
 */
export interface UploadTurns {
  /**
   * Resolves with the function that ends the turn (call it once the answer is sent or the client left). When
   * `signal` aborts first (the client left while waiting), the waiter leaves the line and the promise rejects with
   * the signal's reason, so no turn goes to a client who is gone.
   */
  take(signal?: AbortSignal): Promise<() => void>;
  readonly active: number;
  readonly waiting: number;
}

export function createUploadTurns(options: {
  inFlight: number;
  waiting: number;
  maxWaitMs: number;
}): UploadTurns {
  let active = 0;
  const line: Array<(turn: () => void) => void> = [];

  const turn = () => {
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const next = line.shift();
      if (next) next(turn());
      else active--;
    };
  };

  return {
    get active() {
      return active;
    },
    get waiting() {
      return line.length;
    },
    take(signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      if (active < options.inFlight) {
        active++;
        return Promise.resolve(turn());
      }
      if (line.length >= options.waiting) return Promise.reject(new BusyError(BUSY_RETRY_SECONDS));
      return new Promise((resolve, reject) => {
        const leave = (reason: unknown) => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", left);
          line.splice(line.indexOf(waiter), 1);
          reject(reason);
        };
        const left = () => leave(signal?.reason);
        const waiter = (end: () => void) => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", left);
          resolve(end);
        };
        const timer = setTimeout(() => leave(new BusyError(BUSY_RETRY_SECONDS)), options.maxWaitMs);
        signal?.addEventListener("abort", left, { once: true });
        line.push(waiter);
      });
    },
  };
}
