// Preloaded by the entry points' commands (`node --require ./dist/threadpool.cjs`, built from this file by
// scripts/build.ts): libuv reads UV_THREADPOOL_SIZE when its pool first starts, and Node's ES module loader
// starts it reading the service's own files, before any of them runs. An operator's own value wins.
import { THREADPOOL_SIZE } from "./limits.js";

process.env.UV_THREADPOOL_SIZE ??= String(THREADPOOL_SIZE);
