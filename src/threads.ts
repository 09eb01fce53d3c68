import sharp from "sharp";
import { CORES } from "./limits.js";

/**
 * How a process spreads its work over the cores. Inference threads take half of them by default; the other
 * half decode photos (sharp on libuv's thread pool) and run the event loop. Each photo is decoded by one
 * libvips thread: photos in flight (UPLOADS_IN_FLIGHT, twice the cores) give the parallelism, and one image
 * spread over several threads would only contend with the next one.
 */
export const DEFAULT_INFERENCE_THREADS = Math.max(1, Math.floor(CORES / 2));

/**
 * sharp for a service that sees every photo once: libvips's operation cache (by default up to 50 MB of
 * decoded images, kept for a repeat that never comes) is off, and one thread per image.
 */
export function configureImageDecoding(): void {
  sharp.cache(false);
  sharp.concurrency(1);
}
