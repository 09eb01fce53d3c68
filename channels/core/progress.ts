import type { Logger } from "pino";
import { RECEIVED_NOTICE_AFTER_MS, TYPING_REFRESH_MS } from "../limits.js";
import type { Conversation } from "./conversation.js";
import type { Adapter } from "./types.js";

export interface ProgressDeps {
  conversation: Conversation;
  adapter: Adapter;
  /** The farmer's address, where "typing" shows. */
  to: string;
  /** When the farmer's message arrived: the notice is due RECEIVED_NOTICE_AFTER_MS after it. */
  receivedAt: string;
  /** Whether an earlier attempt of this job already told the farmer the photo arrived. */
  noticeSent: boolean;
  /** Records that the notice went, so a retry does not send it again. */
  onNotice(): Promise<void>;
  logger: Logger;
}

/**
 * Shows the farmer that a photo is being worked on until `stop()`: "typing" where the channel has it
 * (renewed before it lapses), else one short "photo received" once the answer takes longer than
 * RECEIVED_NOTICE_AFTER_MS from the message's arrival. `stop()` waits for a notice already on its way, so it
 * always arrives before the answer.
 */
export function showProgress(deps: ProgressDeps): { stop(): Promise<void> } {
  const { conversation, adapter, logger } = deps;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  // A failed indicator is cosmetic: the answer itself still goes out (or its own failure is retried).
  const quietly = (what: string, work: () => Promise<void>) =>
    work().catch((error: Error) => logger.warn({ err: error.message }, `${what} not shown`));

  if (conversation.capabilities.typing && adapter.showTyping) {
    const type = () => {
      inFlight = quietly("typing", () => adapter.showTyping!(deps.to));
      timer = setTimeout(type, TYPING_REFRESH_MS);
    };
    type();
  } else if (!deps.noticeSent) {
    const due = Date.parse(deps.receivedAt) + RECEIVED_NOTICE_AFTER_MS - Date.now();
    timer = setTimeout(
      () => {
        inFlight = quietly("photo received notice", async () => {
          await conversation.say("received");
          await deps.onNotice();
        });
      },
      Math.max(0, due),
    );
  }
  return {
    async stop() {
      clearTimeout(timer);
      await inFlight;
    },
  };
}
