import type { SentLog, SentMessage } from "../../src/results/sent-log.js";
import { readableText } from "./render/index.js";
import type { Adapter, Capabilities, Reply } from "./types.js";

/** A reply as the farmer's delivery log keeps it: when, on which channel, and the text as a person reads it. */
export function logEntry(
  reply: Reply,
  capabilities: Capabilities,
): Pick<SentMessage, "at" | "channel" | "text"> {
  return {
    at: new Date().toISOString(),
    channel: reply.channel,
    text: readableText(reply.text, capabilities),
  };
}

/**
 * The adapters, each send also written to the farmer's delivery log (what was sent, when, and why a send
 * failed). The log never holds up or fails a send: a log write that fails is only lost.
 */
export function loggingSends(
  adapters: ReadonlyMap<string, Adapter>,
  log: SentLog,
  farmerKey: (provider: string, address: string) => string,
): Map<string, Adapter> {
  const wrap = (adapter: Adapter): Adapter => ({
    ...adapter,
    async send(reply) {
      const entry = logEntry(reply, adapter.capabilities(reply.channel));
      const owner = farmerKey(reply.provider, reply.to);
      try {
        await adapter.send(reply);
      } catch (error) {
        await log.add(owner, { ...entry, ok: false, error: (error as Error).message }).catch(() => undefined);
        throw error;
      }
      await log.add(owner, { ...entry, ok: true }).catch(() => undefined);
    },
  });
  return new Map([...adapters].map(([id, adapter]) => [id, wrap(adapter)]));
}
