import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Tests share one Redis and a 2-core machine; files run in parallel, tests inside a file in order.
    pool: "forks",
    maxWorkers: 2,
  },
});
