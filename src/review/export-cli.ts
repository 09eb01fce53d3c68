// `npm run dataset:export -- DIR`: the photos officers confirmed or corrected, as a training set in the layout
// of ../shared/datasets/leaf-photos. Reads the labelled examples from the service's Redis (REDIS_URL).
import path from "node:path";
import { runExamplesCli } from "./examples-cli.js";
import { exportDataset } from "./export.js";

const [dir, ...rest] = process.argv.slice(2);
if (!dir || rest.length > 0 || dir.startsWith("-")) {
  console.error("usage: npm run dataset:export -- DIR   (a new or empty directory)");
  process.exit(2);
}
runExamplesCli("export", async (examples) => {
  const target = path.resolve(dir);
  const summary = await exportDataset(examples, target, (done, total) => {
    if (process.stderr.isTTY) process.stderr.write(`\r${done}/${total} photos`);
  });
  if (process.stderr.isTTY) process.stderr.write("\n");
  for (const [label, count] of Object.entries(summary.classes)) console.log(`${label}\t${count}`);
  for (const s of summary.skipped) console.error(`skipped ${s.id}: ${s.reason}`);
  console.log(
    `${summary.photos} photos in ${Object.keys(summary.classes).length} classes written to ${target}`,
  );
  return 0;
});
