import { BusyError } from "../diagnosis/diagnoser.js";
import { BUSY_RETRY_SECONDS } from "../diagnosis/model/pool.js";

/**
 * Turns for uploads: at most `inFlight` photos are read into memory and diagnosed at once. The others wait
 * with their bodies unread, in the kernel's socket buffers, which is what keeps the process's memory flat
 * under 64 clients as under 4. A full waiting line, or a wait past `maxWaitMs`, is a BusyError (503).
 */
export interface UploadTurns {
  /** Resolves with the function that ends the turn (call it once the answer is sent or the client left). */
  take(): Promise<() => void>;
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
    take() {
      if (active < options.inFlight) {
        active++;
        return Promise.resolve(turn());
      }
      if (line.length >= options.waiting) return Promise.reject(new BusyError(BUSY_RETRY_SECONDS));
      return new Promise((resolve, reject) => {
        const waiter = (end: () => void) => {
          clearTimeout(timer);
          resolve(end);
        };
        const timer = setTimeout(() => {
          line.splice(line.indexOf(waiter), 1);
          reject(new BusyError(BUSY_RETRY_SECONDS));
        }, options.maxWaitMs);
        line.push(waiter);
      });
    },
  };
}
