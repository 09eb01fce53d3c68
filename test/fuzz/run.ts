// `npm run fuzz`: thousands of seeded malformed uploads (test/fuzz/uploads.ts) against the real service on
// loopback. FUZZ_CASES (default 5000) and FUZZ_SEED (default 1000) choose the run; a failing case is
// replayed by its seed. Exits 1 when any answer breaks the contract.
import { startFuzzTarget } from "./server.js";
import { fuzz } from "./uploads.js";

const count = Number(process.env.FUZZ_CASES ?? 5000);
const firstSeed = Number(process.env.FUZZ_SEED ?? 1000);
const target = await startFuzzTarget();
const started = performance.now();
const report = await fuzz(target.port, {
  count,
  firstSeed,
  concurrency: 8,
  boundMs: 5_000,
  seeds: target.seeds,
});
await target.close();

const seconds = (performance.now() - started) / 1000;
console.log(
  `${report.cases} cases from seed ${firstSeed} in ${seconds.toFixed(1)} s; statuses ${JSON.stringify(report.statuses)}; ` +
    `slowest answer ${report.slowestMs.toFixed(0)} ms; ${report.failures.length} broke the contract`,
);
for (const failure of report.failures.slice(0, 50)) console.log(`  ${failure}`);
process.exitCode = report.failures.length > 0 ? 1 : 0;
