import type { Logger } from "pino";
import type { Diagnoser } from "../../src/diagnosis/diagnoser.js";
import type { Knowledge } from "../../src/diagnosis/kb.js";
import type { Records } from "../../src/results/records.js";
import type { Routing } from "../../src/results/types.js";
import type { ExpertLoop } from "./expert-loop.js";
import type { LanguageMemory } from "./language.js";
import type { Renderer } from "./render/index.js";
import type { ViewOptions } from "./render/view.js";
import type { ReplyWindows } from "./reply-window.js";
import type { Adapter } from "./types.js";

/** What the worker's job handlers use, built once by the worker's composition (worker-main.ts, tests). */
export interface HandlerDeps {
  diagnoser: Diagnoser;
  /** Results, photos, review cases, consent and the delivery log (src/results/records.ts). */
  records: Records;
  languages: LanguageMemory;
  renderer: Renderer;
  /** One adapter per configured provider, by provider id (registry.createAdapters). */
  adapters: ReadonlyMap<string, Adapter>;
  /** Replies kept outside a channel's reply window until the farmer writes (reply-window.ts). */
  windows: ReplyWindows;
  knowledge: Knowledge;
  /** Where a REST result routed by user_data goes (registry.destinationOf over the configured providers). */
  destination(routing: Routing): { provider: string; channel: string; to: string | undefined } | undefined;
  /** The farmer key of an address at a provider (registry.farmerKeys): whose delivery log a send goes to. */
  farmerKey(provider: string, address: string): string;
  view?: ViewOptions;
  /** Feedback prompts and the photo notice (channels/core/expert-loop.ts); the worker always has them. */
  expertLoop?: ExpertLoop;
  logger: Logger;
}
