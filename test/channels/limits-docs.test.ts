import { readFile } from "node:fs/promises";
import { expect, it } from "vitest";
import { CHANNELS_DOC, withChannelTable } from "../../src/limits-docs.js";

it("docs/channels.md states the channel limits exactly as channels/limits.ts defines them (npm run docs:limits)", async () => {
  const doc = await readFile(CHANNELS_DOC, "utf8");
  expect(withChannelTable(doc)).toBe(doc);
});
