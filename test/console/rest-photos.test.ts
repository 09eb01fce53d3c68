// Which REST uploads keep their photo (src/results/record.ts keepsApiPhoto): only those someone may look at,
// an officer through the review queue or after a routed farmer says "wrong". The real model on real photos
// decides; the console and the results API show a result without its photo as such.
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT_DIR } from "../../src/config.js";
import type { Diagnoser } from "../../src/diagnosis/diagnoser.js";
import { reviewReason } from "../../src/results/record.js";
import { multipartBody } from "../api/support/form.js";
import { loadCore } from "../channels/support/core.js";
import { findUnsurePhoto } from "../e2e/unsure-photos.js";
import { type ConsoleTestApp, consoleTestApp, PARTNER_KEYS, Visitor } from "./support.js";

const LAB_PHOTOS = path.resolve(ROOT_DIR, "../shared/datasets/leaf-photos");
const PASSWORD = "correct horse battery staple";

let core: Awaited<ReturnType<typeof loadCore>>;
let t: ConsoleTestApp;
let officer: Visitor;
let confident: Buffer;
let unsure: Buffer;

/** The first lab photo the model diagnoses well enough that no officer needs to see it. */
async function confidentLabPhoto(diagnoser: Diagnoser): Promise<Buffer> {
  const context = { language: "en", detailLevel: "standard", includeBbox: false } as const;
  for (const folder of (await readdir(LAB_PHOTOS)).filter((f) => f.includes("__")).sort()) {
    for (const file of (await readdir(path.join(LAB_PHOTOS, folder))).sort().slice(0, 5)) {
      const bytes = await readFile(path.join(LAB_PHOTOS, folder, file));
      const result = await diagnoser.diagnose(bytes, context, crypto.randomUUID());
      if (result.outcome === "diagnosed" && !reviewReason(result)) return bytes;
    }
  }
  throw new Error(`no lab photo in ${LAB_PHOTOS} that the model diagnoses confidently`);
}

beforeAll(async () => {
  core = await loadCore();
  confident = await confidentLabPhoto(core.diagnoser);
  const unsureFile = await findUnsurePhoto(core.diagnoser);
  if (!unsureFile)
    throw new Error("no photo the model is unsure about: run `npx tsx test/e2e/unsure-photos.ts`");
  unsure = await readFile(unsureFile);
  t = await consoleTestApp("rest-photos", { diagnoser: core.diagnoser });
  await t.addStaff("amina", PASSWORD);
  officer = new Visitor(t.app);
  await officer.signIn("amina", PASSWORD);
}, 120_000);
afterAll(async () => {
  await t?.close();
  await core?.diagnoser.close();
});

async function diagnose(photo: Buffer, fields: Record<string, string> = {}) {
  const { payload, headers } = await multipartBody({ language: "en", ...fields }, { data: photo });
  const res = await t.app.inject({
    method: "POST",
    url: "/diagnosis/",
    payload,
    headers: { ...headers, "x-api-key": PARTNER_KEYS.a },
  });
  expect(res.statusCode).toBe(200);
  const body = res.json() as { request_id: string; outcome: string };
  const stored = await t.recorded(body.request_id);
  expect(stored).toBeDefined();
  return { body, stored: stored!, kept: await t.records.photos.get(body.request_id) };
}

describe("photos of REST uploads", () => {
  it("keeps none for a confident diagnosis that stays with the partner; the console says so", async () => {
    const { body, stored, kept } = await diagnose(confident);
    expect(body.outcome).toBe("diagnosed");
    expect(stored.review).toBeUndefined();
    expect(stored.photo).toBe(false);
    expect(kept).toBeUndefined();

    const page = await officer.get(`/console/cases/${stored.code}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<div class="photo missing">No photo was kept with this result.</div>');
    expect(page.body).not.toContain(`/console/photos/${body.request_id}`);
    expect((await officer.get(`/console/photos/${body.request_id}`)).statusCode).toBe(404);

    const read = await t.app.inject({
      method: "GET",
      url: `/results/${body.request_id}`,
      headers: { "x-api-key": PARTNER_KEYS.a },
    });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({ request_id: body.request_id, review: { status: "not_needed" } });
  });

  it("keeps it, as a viewable JPEG, when the result goes to the officers' review queue", async () => {
    const { body, stored, kept } = await diagnose(unsure);
    expect(body.outcome).toBe("unsure");
    expect(stored.review?.reasons).toEqual(["unsure"]);
    expect(stored.photo).toBe(true);
    expect(kept?.type).toBe("image/jpeg");

    const page = await officer.get(`/console/cases/${stored.code}`);
    expect(page.body).toContain(`/console/photos/${body.request_id}`);
    expect(page.body).not.toContain('<div class="photo missing">');
    const photo = await officer.get(`/console/photos/${body.request_id}`);
    expect(photo.statusCode).toBe(200);
    expect(photo.headers["content-type"]).toBe("image/jpeg");
  });

  it("keeps it for a confident diagnosis routed to a farmer, who may answer that it is wrong", async () => {
    const { body, stored, kept } = await diagnose(confident, {
      user_data: JSON.stringify({ channel: "sms", phone: "+254712345678" }),
    });
    expect(body.outcome).toBe("diagnosed");
    expect(stored.review).toBeUndefined();
    expect(stored.routing).toEqual({ channel: "sms", phone: "+254712345678" });
    expect(stored.photo).toBe(true);
    expect(kept?.type).toBe("image/jpeg");
  });
});
