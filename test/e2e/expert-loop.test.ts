// The expert loop end to end, in real Chromium: a farmer's photo arrives through the Telegram webhook and the
// real model is unsure; an officer signs in, finds it in the review queue and corrects it; the farmer's chat
// (the loopback Telegram API) gets the answer in Swahili; the dataset export holds the photo with its label.
// Along the way every console page is photographed at phone and desktop width (docs/console/ when
// UPDATE_SCREENSHOTS=1, else a temporary folder).
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routingOwner } from "../../channels/core/registry.js";
import { PROVIDERS } from "../../channels/providers.js";
import { buildApp } from "../../src/app.js";
import { loadConfig, ROOT_DIR } from "../../src/config.js";
import type { Knowledge } from "../../src/diagnosis/kb.js";
import { lastWeeks } from "../../src/outbreaks/weeks.js";
import { createResultSink } from "../../src/results/sink.js";
import type { StoredResult } from "../../src/results/types.js";
import { exportDataset, MANIFEST_COLUMNS } from "../../src/review/export.js";
import { createStaffStore } from "../../src/staff/accounts.js";
import { hashPassword } from "../../src/staff/passwords.js";
import { loadCore } from "../channels/support/core.js";
import { resultFixture } from "../channels/support/fixtures.js";
import { type Harness, startHarness } from "../channels/support/harness.js";
import { postTelegram } from "../channels/support/webhooks.js";
import { leafJpeg } from "../diagnosis/fixtures.js";
import { CHROMIUM } from "../support/chromium.js";
import { fieldPhotos, findUnsurePhoto } from "./unsure-photos.js";

const CHAT = 880_042;
const OFFICER = { username: "wanjiku", name: "Wanjiku Kamau", password: "mahindi-na-maharagwe-2026" };
const CORRECTED = "tomato__early_blight";
const SHOTS = process.env.UPDATE_SCREENSHOTS === "1" ? path.join(ROOT_DIR, "docs/console") : undefined;
const VIEWPORTS = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } } as const;

let h: Harness;
let core: Awaited<ReturnType<typeof loadCore>>;
let kb: Knowledge;
let base: string;
let browser: Browser;
let shotsDir: string;
let photoFile: string;
let stored: StoredResult;
const consoleErrors: string[] = [];
const offHost: string[] = [];
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  core = await loadCore();
  kb = core.knowledge;
  const found = await findUnsurePhoto(core.diagnoser);
  if (!found) throw new Error("no photo the model is unsure about: run `npx tsx test/e2e/unsure-photos.ts`");
  photoFile = found;
  h = await startHarness({
    name: "expert-loop",
    diagnoser: core.diagnoser,
    knowledge: core.knowledge,
    expertLoop: true,
    baseApp: async ({ redis, records, queue, keyPrefix }) => {
      const staff = createStaffStore(redis, { prefix: keyPrefix, file: "/nonexistent" });
      await staff.put({
        username: OFFICER.username,
        name: OFFICER.name,
        role: "officer",
        passwordHash: await hashPassword(OFFICER.password),
        disabled: false,
        createdAt: new Date().toISOString(),
        version: 1,
      });
      const config = loadConfig({ CONSOLE_SESSION_SECRET: "e2e-session-secret-at-least-32-characters" });
      return buildApp(
        {
          config,
          diagnoser: core.diagnoser,
          redis,
          records,
          staff,
          knowledge: kb,
          enqueueAnswer: queue.enqueueAnswer,
          resultSink: createResultSink({
            record: records.record,
            enqueueDelivery: queue.enqueueDelivery,
            ownerOf: routingOwner(PROVIDERS),
          }),
        },
        { logger: false, rateLimitKeyPrefix: `${keyPrefix}rl`, keyPrefix },
      );
    },
  });
  h.startWorker();
  base = await h.app.listen({ port: 0, host: "127.0.0.1" });
  shotsDir = SHOTS ?? (await mkdtemp(path.join(tmpdir(), "console-shots-")));
  await mkdir(shotsDir, { recursive: true });
  if (!SHOTS) cleanups.push(() => rm(shotsDir, { recursive: true, force: true }));
  browser = await chromium.launch(CHROMIUM);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
  await core?.diagnoser.close();
  for (const cleanup of cleanups) await cleanup();
});

type Storage = Awaited<ReturnType<BrowserContext["storageState"]>>;

async function newPage(viewport: keyof typeof VIEWPORTS, storage?: Storage) {
  const context = await browser.newContext({
    viewport: VIEWPORTS[viewport],
    locale: "en-GB",
    ...(storage ? { storageState: storage } : {}),
  });
  // Nothing the console shows may come from another host.
  context.on("request", (r) => {
    if (!r.url().startsWith(base) && !/^(data|blob):/.test(r.url())) offHost.push(r.url());
  });
  await context.route(
    (url) => url.origin !== new URL(base).origin && url.protocol.startsWith("http"),
    (route) => route.abort(),
  );
  const page = await context.newPage();
  page.on("console", (m) => m.type() === "error" && consoleErrors.push(`${page.url()}: ${m.text()}`));
  page.on("pageerror", (e) => consoleErrors.push(`${page.url()}: ${e.message}`));
  return page;
}

/** What these page scripts read of an <img> (this project's TypeScript has no DOM typings). */
type Img = {
  loading: string;
  complete: boolean;
  naturalWidth: number;
  getAttribute(name: string): string | null;
};

/** A full-page screenshot once every photo has loaded (lazy ones too: the shot covers the whole page). */
async function shoot(page: Page, name: string) {
  await page.locator("img[src]").evaluateAll((imgs: Img[]) => {
    for (const img of imgs) img.loading = "eager";
  });
  await page.waitForFunction(() => {
    const { document } = globalThis as unknown as { document: { images: ArrayLike<Img> } };
    return Array.from(document.images)
      .filter((img) => img.getAttribute("src"))
      .every((img) => img.complete && img.naturalWidth > 0);
  });
  await page.screenshot({ path: path.join(shotsDir, `${name}.png`), fullPage: true });
}

function telegramSendsTo(chat: number) {
  return h.standIn.sends("telegram").filter((s) => s.body.chat_id === String(chat));
}

/** Waits (on the stand-in's sends, no polling sleep) until the chat got a message that `match` accepts. */
async function waitForTelegram(chat: number, match: (text: string) => boolean, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = telegramSendsTo(chat).find((s) => match(String(s.body.text)));
    if (found) return String(found.body.text);
    if (Date.now() > deadline)
      throw new Error(
        `chat ${chat} got no such message: ${JSON.stringify(telegramSendsTo(chat).map((s) => s.body.text))}`,
      );
    const next = h.standIn.sends("telegram").length + 1;
    await h.standIn.waitForSends("telegram", next, Math.max(1, deadline - Date.now())).catch(() => undefined);
  }
}

describe("the expert loop", () => {
  it("a photo the model is unsure about, sent on Telegram, waits in the review queue", async () => {
    h.standIn.media.set("field-photo", await readFile(photoFile));
    const update = {
      update_id: 91_000_001,
      message: {
        message_id: 1,
        from: { id: CHAT, is_bot: false, first_name: "Juma", language_code: "sw" },
        chat: { id: CHAT, first_name: "Juma", type: "private" },
        date: Math.floor(Date.now() / 1000),
        caption: "Majani ya nyanya yana madoa ya kahawia",
        photo: [
          { file_id: "field-photo", file_unique_id: "AQfield", file_size: 31_000, width: 416, height: 416 },
        ],
      },
    };
    const res = await postTelegram(h.app, update);
    expect(res.statusCode).toBe(200);
    // The reply says an officer will look and gives the code; the farmer is told about keeping photos.
    const officer = h.renderer.texts("sw", "officer");
    const reply = await waitForTelegram(CHAT, (text) => text.includes(officer));
    [stored] = (await h.records.store.listFor(`tg:${CHAT}`)) as [StoredResult];
    expect(reply).toContain(stored.code);
    const notice = h.renderer.texts("sw", "consent_notice_button");
    await waitForTelegram(CHAT, (text) => text === notice);
    expect(stored.result.outcome).toBe("unsure");
    expect(stored.review?.reasons).toEqual(["unsure"]);
    expect(stored).toMatchObject({
      source: "telegram",
      language: "sw",
      note: update.message.caption,
      photo: true,
    });
  }, 120_000);

  it("an officer signs in, finds the case and corrects it; the farmer gets the answer in Swahili", async () => {
    const page = await newPage("desktop");
    await page.goto(`${base}/console/review`);
    await expect.poll(() => new URL(page.url()).pathname).toBe("/console/sign-in");
    await shoot(page, "sign-in-desktop");
    await page.getByLabel("User name").fill(OFFICER.username);
    await page.getByLabel("Password").fill(OFFICER.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${base}/console/review`);

    const card = page.locator(`li[data-code="${stored.code}"]`);
    await expect.poll(() => card.count()).toBe(1);
    expect(await card.textContent()).toContain("Model unsure");
    expect(await card.textContent()).toContain("Majani ya nyanya yana madoa ya kahawia");
    // The model's three readings, named in the officer's language.
    for (const c of stored.result.candidates) expect(await card.textContent()).toContain(kb.name(c.id, "en"));
    await shoot(page, "review-desktop");

    await card.getByRole("button", { name: "Answer" }).click();
    await page.waitForURL(`${base}/console/review/${stored.result.request_id}`);
    await page.getByRole("radio", { name: /It is another disease/ }).check();
    await page.locator('select[name="class_id"]').selectOption(CORRECTED);
    await shoot(page, "answer-desktop");
    await page.getByRole("button", { name: "Send the answer" }).click();
    await page.waitForURL(`${base}/console/review`);
    const flash = (await page.locator(".flash.ok").textContent()) ?? "";
    expect(flash).toContain("It goes to the farmer on Telegram in Kiswahili");
    expect(flash).toContain("kept as a labelled example");
    expect(await page.locator(`li[data-code="${stored.code}"]`).count()).toBe(0);

    const name = kb.name(CORRECTED, "sw");
    const answer = await waitForTelegram(CHAT, (text) => text.includes(`(${stored.code}): ${name}`));
    expect(answer).toContain(`Afisa ugani ameangalia picha yako (${stored.code}): ${name}.`);
    expect(answer).toContain(kb.treatment([CORRECTED], "sw", "simple").immediate_actions[0]!);
    await page.context().close();
  }, 120_000);

  it("the export holds that photo with its corrected label", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "expert-loop-export-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const summary = await exportDataset(h.records.examples, dir);
    expect(summary.classes).toEqual({ [CORRECTED]: 1 });
    const [header, row] = (await readFile(path.join(dir, "manifest.csv"), "utf8")).trim().split("\n");
    expect(header).toBe(MANIFEST_COLUMNS.join(","));
    const fields = Object.fromEntries(MANIFEST_COLUMNS.map((c, i) => [c, row!.split(",")[i]]));
    expect(fields).toMatchObject({
      file: `${CORRECTED}/${stored.result.request_id}.jpg`,
      label: CORRECTED,
      source_channel: "telegram",
      officer_decision: "corrected",
      officer: OFFICER.username,
      model_outcome: "unsure",
    });
    const [original, exported] = await Promise.all([
      sharp(photoFile).metadata(),
      sharp(path.join(dir, fields.file!)).metadata(),
    ]);
    expect([exported.width, exported.height]).toEqual([original.width, original.height]);
  });
});

describe("every console page, at phone and desktop width", () => {
  let storage: Storage;

  beforeAll(async () => {
    // A queue with several cases, as officers meet it: other farmers' photos the model is unsure about,
    // and a diagnosis a farmer said was wrong.
    const owners = [
      { owner: "+254712300001", source: "whatsapp", language: "sw", note: "Mahindi yangu yana madoa" },
      { owner: "+255754300002", source: "sms", language: "sw" },
      { owner: "+33612300003", source: "whatsapp", language: "fr", note: "Taches brunes sur les feuilles" },
    ] as const;
    const unsure = await fieldPhotos(core.diagnoser, "unsure", owners.length);
    for (const [i, file] of unsure.entries()) {
      const result = await core.diagnoser.diagnose(
        await readFile(file),
        { language: owners[i]!.language, detailLevel: "simple", includeBbox: true },
        crypto.randomUUID(),
      );
      await h.records.record(result, { ...owners[i]!, photo: await readFile(file) });
    }
    const [diagnosed] = await fieldPhotos(core.diagnoser, "diagnosed", 1);
    const said = await core.diagnoser.diagnose(
      await readFile(diagnosed!),
      { language: "pt", detailLevel: "simple", includeBbox: true },
      crypto.randomUUID(),
    );
    const wrong = await h.records.record(said, {
      owner: "+258841200004",
      source: "whatsapp",
      language: "pt",
      photo: await readFile(diagnosed!),
    });
    await h.records.reviews.add(wrong, "farmer_said_wrong");

    // Weekly counts for the outbreak view: a rust surge in Kenya this week, steady blights elsewhere.
    const weeks = lastWeeks(new Date(), 12).map((w) => w.week);
    const series: [string, string, number[]][] = [
      ["KE", "maize__common_rust", [1, 0, 2, 1, 2, 1, 3, 2, 1, 2, 2, 9]],
      ["TZ", "maize__northern_leaf_blight", [2, 3, 2, 4, 3, 3, 2, 4, 3, 3, 4, 3]],
      ["KE", "tomato__late_blight", [0, 1, 1, 2, 4, 5, 3, 2, 2, 1, 1, 2]],
      ["UG", "bean__angular_leaf_spot", [1, 1, 0, 2, 1, 1, 2, 1, 2, 1, 3, 2]],
    ];
    for (const [region, disease, counts] of series)
      for (const [i, n] of counts.entries())
        if (n) await h.records.outbreaks.add(weeks[i]!, region, disease, n);

    const page = await newPage("desktop");
    await page.goto(`${base}/console/sign-in`);
    await page.getByLabel("User name").fill(OFFICER.username);
    await page.getByLabel("Password").fill(OFFICER.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${base}/console/review`);
    storage = await page.context().storageState();
    await page.context().close();
  }, 180_000);

  for (const viewport of ["desktop", "phone"] as const) {
    it(`${viewport}: sign-in, diagnose, result, look-up, review queue, answer and outbreak pages`, async () => {
      const anonymous = await newPage(viewport);
      await anonymous.goto(`${base}/console/`);
      await anonymous.getByRole("button", { name: "Sign in" }).waitFor();
      await shoot(anonymous, `sign-in-${viewport}`);
      await anonymous.context().close();

      const page = await newPage(viewport, storage);
      await page.goto(`${base}/console/diagnose`);
      await shoot(page, `diagnose-${viewport}`);
      const [photo] = await fieldPhotos(core.diagnoser, "diagnosed", 1, { limit: 1311, boxed: true });
      await page.locator('input[type="file"]').setInputFiles(photo!);
      await page.locator(".preview").waitFor();
      await page.getByLabel("Region or country").fill("Nakuru, Kenya");
      await page.getByRole("button", { name: "Diagnose" }).click();
      await page.waitForURL(/\/console\/cases\/[A-Z0-9]{6}\?level=simple$/);
      const code = (await page.locator("[data-code]").first().textContent())?.trim() ?? "";
      expect(code).toMatch(/^[A-Z0-9]{6}$/);
      expect(await page.locator(".photo svg rect").count()).toBeGreaterThan(0);
      expect(await page.locator(".treatment").textContent()).toContain("Do now");
      await shoot(page, `result-${viewport}`);

      await page.goto(`${base}/console/lookup?q=${encodeURIComponent(`tg:${CHAT}`)}`);
      expect(await page.locator(".messages .bubble").count()).toBeGreaterThanOrEqual(2);
      await shoot(page, `lookup-${viewport}`);

      await page.goto(`${base}/console/review`);
      expect(await page.locator("li.case-card").count()).toBeGreaterThanOrEqual(4);
      await shoot(page, `review-${viewport}`);
      await page.locator("li.case-card").first().getByRole("button", { name: "Answer" }).click();
      await page.waitForURL(/\/console\/review\/[0-9a-f-]{36}$/);
      await shoot(page, `answer-${viewport}`);
      await page.getByRole("button", { name: "Leave it for someone else" }).click();
      await page.waitForURL(`${base}/console/review`);

      await page.goto(`${base}/console/outbreaks`);
      expect(await page.locator("tr.surge").count()).toBe(1);
      expect(await page.locator(".chart polyline").count()).toBeGreaterThanOrEqual(4);
      await shoot(page, `outbreaks-${viewport}`);
      await page.context().close();
    }, 120_000);
  }

  it("says 'no photo was kept' where a photo gone from the store stood, not a broken image", async () => {
    const gone = await h.records.record(resultFixture(), {
      language: "en",
      source: "console",
      photo: await leafJpeg(64, 48),
    });
    // As a process without Redis evicts its oldest photos from memory.
    await h.redis.del(...(await h.redis.keys(`*photo:${gone.result.request_id}`)));
    // Its own context: the browser logs the photo's 404, which the test below counts as a page error.
    const context = await browser.newContext({ ...VIEWPORTS.desktop, storageState: storage });
    const page = await context.newPage();
    await page.goto(`${base}/console/cases/${gone.code}`);
    await page.locator(".photo.missing").waitFor();
    expect(await page.locator(".photo.missing").textContent()).toBe("No photo was kept with this result.");
    expect(await page.locator("figure.photo img").count()).toBe(0);
    await context.close();
  });

  it("made no request to another host and logged no error in any page", () => {
    expect(offHost).toEqual([]);
    expect(consoleErrors).toEqual([]);
  });
});
