// Imported first by the entry points: libuv reads UV_THREADPOOL_SIZE when its pool first starts, so it must
// be set before any module queues work there. An operator's own value wins.
import { THREADPOOL_SIZE } from "./threads.js";

process.env.UV_THREADPOOL_SIZE ??= String(THREADPOOL_SIZE);
