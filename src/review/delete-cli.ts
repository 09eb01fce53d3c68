// `npm run dataset:delete -- CODE|REQUEST_ID ...`: deletes labelled examples, also those whose result has expired
// (the console's delete button is on the result's page, which lives 30 days). Reads the service's Redis.
import { normalizeShortCode } from "../results/short-code.js";
import { runExamplesCli } from "./examples-cli.js";

const args = process.argv.slice(2);
if (args.length === 0 || args.some((a) => a.startsWith("-"))) {
  console.error(
    "usage: npm run dataset:delete -- CODE|REQUEST_ID ...   (a result's code, e.g. K7M4QX, or its id)",
  );
  process.exit(2);
}
runExamplesCli("delete", async (examples) => {
  const all = await examples.list();
  let missing = 0;
  for (const arg of args) {
    const code = normalizeShortCode(arg);
    const found = all.find((e) => e.id === arg || (code !== undefined && e.code === code));
    if (found && (await examples.delete(found.id))) console.log(`deleted ${found.code} (${found.id})`);
    else {
      console.error(`dataset:delete: no labelled example ${arg}`);
      missing++;
    }
  }
  return missing > 0 ? 1 : 0;
});
