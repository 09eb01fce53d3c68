/**
 * `npm start` and `npm run worker` exec node (package.json), so npm's only child is the service and npm passes
 * SIGTERM and SIGINT on to it. A signal npm cannot pass on (SIGKILL, or npm crashing) would leave the service
 * running with nobody owning it: when npm, its parent, is gone, the service stops itself the graceful way.
 */
export function stopWithNpm(stop: () => void): void {
  if (!process.env.npm_lifecycle_event) return;
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) stop();
  }, 1_000).unref();
}
