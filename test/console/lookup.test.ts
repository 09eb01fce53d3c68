import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultFixture } from "../channels/support/fixtures.js";
import { type ConsoleTestApp, consoleTestApp, Visitor } from "./support.js";

const PASSWORD = "correct horse battery staple";
const FARMER = "+254700333444";
let t: ConsoleTestApp;

beforeAll(async () => {
  t = await consoleTestApp("lookup");
  await t.addStaff("amina", PASSWORD);
}, 60_000);
afterAll(() => t?.close());

describe("looking a farmer up", () => {
  it("keeps their number out of the log lines (it travels in the query string)", async () => {
    const v = new Visitor(t.app);
    await v.signIn("amina", PASSWORD);
    const before = t.logs().length;
    // Nobody by this number yet: the page says so (404), and the request is logged all the same.
    expect((await v.get(`/console/lookup?q=${encodeURIComponent("+254700999888")}`)).statusCode).toBe(404);
    const lines = t.logs().slice(before);
    expect(lines.some((l) => l.includes('"url":"/console/lookup"'))).toBe(true);
    expect(lines.join("\n")).not.toMatch(/254700999888/);
  });
});

describe("a farmer's messages on the look-up page", () => {
  it("tells a message waiting for the farmer to write (WhatsApp's window) from one sent or refused", async () => {
    await t.records.record(resultFixture(), { language: "en", owner: FARMER, source: "whatsapp" });
    const at = new Date().toISOString();
    await t.records.sent.add(FARMER, { at, channel: "whatsapp", text: "Your maize has rust.", ok: true });
    await t.records.sent.add(FARMER, { at, channel: "sms", text: "Refused one.", ok: false, error: "21610" });
    await t.records.sent.add(FARMER, {
      at,
      channel: "whatsapp",
      text: "An officer answered.",
      ok: false,
      held: true,
    });
    const v = new Visitor(t.app);
    await v.signIn("amina", PASSWORD);
    const page = await v.get(`/console/lookup?q=${encodeURIComponent(FARMER)}`);
    expect(page.statusCode).toBe(200);
    // Its result kept no photo: the note sits in the thumbnail's place, at the thumbnail's size.
    expect(page.body).toContain('<div class="photo small missing">');
    const pills = [...page.body.matchAll(/<span class="pill (\w+)">([^<]*)<\/span>/g)].map((m) => [
      m[1],
      m[2],
    ]);
    expect(pills).toEqual([
      ["wait", "Waiting: WhatsApp lets it through once the farmer writes"],
      ["bad", "Failed"],
      ["ok", "Sent"],
    ]);
    // The farmer wrote: the kept message went out, and the entry that waited says so.
    await t.records.sent.add(FARMER, { at, channel: "whatsapp", text: "An officer answered.", ok: true });
    const after = await v.get(`/console/lookup?q=${encodeURIComponent(FARMER)}`);
    const now = [...after.body.matchAll(/<span class="pill (\w+)">([^<]*)<\/span>/g)].map((m) => [
      m[1],
      m[2],
    ]);
    expect(now.slice(0, 2)).toEqual([
      ["ok", "Sent"],
      ["ok", "Kept, then sent when the farmer wrote"],
    ]);
  });
});

describe("deleting everything about a farmer from the look-up", () => {
  it("is an administrator's, asked for by the farmer, and leaves nothing of theirs to look up", async () => {
    const farmer = "+254700777888";
    const stored = await t.records.record(resultFixture(), { language: "en", owner: farmer, source: "sms" });
    await t.addStaff("wanjiru", PASSWORD, "admin");
    const officer = new Visitor(t.app);
    await officer.signIn("amina", PASSWORD);
    const page = await officer.get(`/console/lookup?q=${encodeURIComponent(farmer)}`);
    expect(page.body).not.toContain("/console/lookup/forget");
    expect((await officer.post("/console/lookup/forget", { who: farmer, asked: "yes" })).statusCode).toBe(
      403,
    );

    const admin = new Visitor(t.app);
    await admin.signIn("wanjiru", PASSWORD);
    expect((await admin.get(`/console/lookup?q=${encodeURIComponent(farmer)}`)).body).toContain(
      'action="/console/lookup/forget"',
    );
    // Without "the farmer asked for it" ticked, nothing happens.
    expect((await admin.post("/console/lookup/forget", { who: farmer })).statusCode).toBe(400);
    expect(await t.records.store.getByCode(stored.code)).toBeDefined();

    const done = await admin.post("/console/lookup/forget", { who: farmer, asked: "yes" });
    expect(done.statusCode).toBe(303);
    expect(await t.records.store.getByCode(stored.code)).toBeUndefined();
    const after = await admin.get(done.headers.location as string);
    expect(after.body).toContain(`Deleted for ${farmer}: results 1, kept photos 0.`);
    expect((await admin.get(`/console/lookup?q=${encodeURIComponent(farmer)}`)).statusCode).toBe(404);
  });
});

describe("deleting a farmer when channels run", () => {
  it("queues the deletion in the farmer's chain (the worker also drops their language and waiting replies)", async () => {
    const queued: string[] = [];
    const withChannels = await consoleTestApp("lookup-queued", {
      enqueueForget: async (owner) => {
        queued.push(owner);
      },
    });
    try {
      const farmer = "+254700777999";
      const stored = await withChannels.records.record(resultFixture(), {
        language: "en",
        owner: farmer,
        source: "sms",
      });
      await withChannels.addStaff("wanjiru", PASSWORD, "admin");
      const admin = new Visitor(withChannels.app);
      await admin.signIn("wanjiru", PASSWORD);
      await admin.get(`/console/lookup?q=${encodeURIComponent(farmer)}`);
      const done = await admin.post("/console/lookup/forget", { who: farmer, asked: "yes" });
      expect(done.statusCode).toBe(303);
      expect(queued).toEqual([farmer]);
      // The worker deletes it; the console deleted nothing itself.
      expect(await withChannels.records.store.getByCode(stored.code)).toBeDefined();
      expect((await admin.get(done.headers.location as string)).body).toContain(
        `Deleting everything about ${farmer}`,
      );
    } finally {
      await withChannels.close();
    }
  });
});
