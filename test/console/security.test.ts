import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { formatTime, formatWhen } from "../../src/console/views/format.js";
import { MAX_IMAGE_BYTES } from "../../src/diagnosis/image/limits.js";
import { SIGN_IN_ATTEMPTS } from "../../src/limits.js";
import { labelledExample, resultFixture } from "../channels/support/fixtures.js";
import { leafJpeg } from "../diagnosis/fixtures.js";
import { type ConsoleTestApp, consoleTestApp, PARTNER_KEYS, Visitor } from "./support.js";

const PASSWORD = "correct horse battery staple";
let t: ConsoleTestApp;
let caseId: string;
let caseCode: string;

beforeAll(async () => {
  t = await consoleTestApp("security");
  await t.addStaff("amina", PASSWORD);
  const stored = await t.records.record(
    resultFixture({ outcome: "unsure", diagnoses: [], crop_health: "unknown" }),
    {
      language: "sw",
      source: "telegram",
      owner: "tg:5550001",
      client: "partner-a",
    },
  );
  caseId = stored.result.request_id;
  caseCode = stored.code;
}, 60_000);
afterAll(() => t?.close());

/**
 * Every route the app serves, read off Fastify's route tree: the console's, except what the sign-in page
 * itself needs (the page, its language switch, the static assets).
 */
function protectedRoutes(): { method: string; url: string }[] {
  const routes: { method: string; url: string }[] = [];
  const stack: string[] = [];
  for (const line of t.app.printRoutes({ commonPrefix: false }).split("\n")) {
    const match = /^([│ ]*)[├└]── (\S+) \(([A-Z, ]+)\)/.exec(line) ?? /^([│ ]*)[├└]── (\S+)$/.exec(line);
    if (!match) continue;
    const depth = (match[1] ?? "").length / 4;
    stack.length = depth;
    stack.push(match[2] ?? "");
    const path = stack.join("");
    if (!match[3] || !path.startsWith("/console")) continue;
    if (
      path.startsWith("/console/assets/") ||
      ["/console", "/console/", "/console/sign-in", "/console/language"].includes(path)
    )
      continue;
    for (const method of match[3].split(", "))
      if (method !== "HEAD")
        routes.push({
          method,
          url: path.replace(":code", caseCode).replace(":id", caseId).replace("*", "anything"),
        });
  }
  return routes;
}

describe("the console without a session", () => {
  it("refuses every route: pages send the browser to sign-in, anything else is 401", async () => {
    const routes = protectedRoutes();
    expect(
      routes
        .map(
          (r) =>
            `${r.method} ${r.url.replace(caseId, ":id").replace(caseCode, ":code").replace("anything", "*")}`,
        )
        .sort(),
    ).toEqual(
      [
        "GET /console/*",
        "GET /console/cases/:code",
        "GET /console/diagnose",
        "GET /console/lookup",
        "GET /console/outbreaks",
        "GET /console/photos/:id",
        "GET /console/review",
        "GET /console/review/:id",
        "POST /console/diagnose",
        "POST /console/examples/:id/delete",
        "POST /console/lookup/forget",
        "POST /console/review/:id/answer",
        "POST /console/review/:id/claim",
        "POST /console/review/:id/release",
        "POST /console/sign-out",
      ].sort(),
    );
    for (const { method, url } of routes) {
      const res = await t.app.inject({
        method: method as "GET" | "POST",
        url,
        payload: method === "POST" ? {} : undefined,
      });
      if (method === "GET") {
        expect(res.statusCode, url).toBe(303);
        expect(res.headers.location, url).toMatch(/^\/console\/sign-in\?next=/);
      } else {
        expect([401, 403], `${method} ${url}`).toContain(res.statusCode);
      }
      expect(res.body, url).not.toContain(caseCode);
      expect(res.body, url).not.toContain("5550001");
    }
  });

  it("refuses the results API without a key or session, and a key reads only its own results", async () => {
    const anonymous = await t.app.inject({ method: "GET", url: `/results/${caseId}` });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json().detail).toMatch(/API key/);
    const byCode = await t.app.inject({ method: "GET", url: `/results/${caseCode}` });
    expect(byCode.statusCode).toBe(401);

    const own = await t.app.inject({
      method: "GET",
      url: `/results/${caseCode}`,
      headers: { "x-api-key": PARTNER_KEYS.a },
    });
    expect(own.statusCode).toBe(200);
    // A partner's data that changes when an officer answers: no cache keeps it, none serves it to another key.
    expect(own.headers["cache-control"]).toBe("no-store");
    expect(own.headers.vary).toMatch(/X-API-Key/);
    expect(own.json()).toMatchObject({
      request_id: caseId,
      code: caseCode,
      source: "telegram",
      review: { status: "waiting", reasons: ["unsure"], answer: null },
    });
    const other = await t.app.inject({
      method: "GET",
      url: `/results/${caseId}`,
      headers: { "x-api-key": PARTNER_KEYS.b },
    });
    expect(other.statusCode).toBe(404);
    const missing = await t.app.inject({
      method: "GET",
      url: "/results/K7M4QX",
      headers: { "x-api-key": PARTNER_KEYS.a },
    });
    expect(missing.statusCode).toBe(404);
  });

  it("records which key made a REST result, so that key and only it reads it back", async () => {
    const { multipartBody } = await import("../api/support/form.js");
    const { payload, headers } = await multipartBody(
      { language: "en" },
      { data: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1]) },
    );
    const made = await t.app.inject({
      method: "POST",
      url: "/diagnosis/",
      payload,
      headers: { ...headers, "x-api-key": PARTNER_KEYS.b },
    });
    expect(made.statusCode).toBe(200);
    const id = made.json().request_id as string;
    // The sink runs after the response: wait for the stored result.
    for (let i = 0; i < 100 && !(await t.records.store.get(id)); i++)
      await new Promise((r) => setImmediate(r));
    const read = await t.app.inject({
      method: "GET",
      url: `/results/${id}`,
      headers: { "x-api-key": PARTNER_KEYS.b },
    });
    expect(read.statusCode).toBe(200);
    expect(read.json().result.request_id).toBe(id);
    expect(
      (await t.app.inject({ method: "GET", url: `/results/${id}`, headers: { "x-api-key": PARTNER_KEYS.a } }))
        .statusCode,
    ).toBe(404);
  });
});

describe("signing in and out", () => {
  it("checks CSRF on sign-in and on every form once signed in", async () => {
    const v = new Visitor(t.app);
    await v.get("/console/sign-in");
    const forged = await v.post(
      "/console/sign-in",
      { username: "amina", password: PASSWORD },
      { csrf: false },
    );
    expect(forged.statusCode).toBe(403);
    expect(forged.body).toContain("This form had expired");
    expect((await v.signIn("amina", PASSWORD)).statusCode).toBe(303);
    for (const url of [
      "/console/sign-out",
      "/console/language",
      `/console/review/${caseId}/claim`,
      `/console/review/${caseId}/release`,
      `/console/review/${caseId}/answer`,
    ]) {
      const res = await v.post(
        url,
        { lang: "fr", kind: "answered", diagnosis: "x", advice: "y" },
        { csrf: false },
      );
      expect(res.statusCode, url).toBe(403);
      const wrong = await v.post(url, { _csrf: "not-the-token", lang: "fr" }, { csrf: false });
      expect(wrong.statusCode, url).toBe(403);
    }
    // The multipart diagnose form carries its token in the body too.
    const upload = await v.postMultipart(
      "/console/diagnose",
      { language: "en", detail_level: "simple" },
      { data: Buffer.from([1]) },
    );
    expect(upload.statusCode).toBe(403);
    // Still signed in: the forged requests changed nothing.
    expect((await v.get("/console/review")).statusCode).toBe(200);
  });

  it("refuses a wrong password with one message, and rate-limits guessing per user name", async () => {
    await t.addStaff("baraka", PASSWORD);
    const v = new Visitor(t.app);
    const wrong = await v.signIn("baraka", "not the password at all");
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain("Wrong user name or password.");
    const nobody = await v.signIn("nobody", "not the password at all");
    expect(nobody.body).toContain("Wrong user name or password.");
    // A password typed into the user name field does not reach the logs; a real account's name does.
    await v.signIn("my secret passphrase", PASSWORD);
    const failures = t.logs().filter((l) => l.includes('"sign-in failed"'));
    expect(failures.join("\n")).not.toContain("my secret passphrase");
    expect(failures.join("\n")).not.toContain("nobody");
    expect(failures.some((l) => l.includes('"username":"baraka"'))).toBe(true);
    for (let i = 0; i < 4; i++) await v.signIn("baraka", `guess ${i} of a password`);
    // Five failures: even the right password is refused until the window runs out.
    const locked = await v.signIn("baraka", PASSWORD);
    expect(locked.statusCode).toBe(429);
    expect(locked.body).toMatch(/Too many attempts/);
  });

  it("does not let guesses from other addresses lock an officer out, up to the user name's own ceiling", async () => {
    await t.addStaff("bahati", PASSWORD);
    const attacker = (n: number) => new Visitor(t.app, `198.51.100.${n}`);
    // Five wrong guesses from each of two addresses: each of those addresses is paused for this name...
    for (const n of [1, 2]) {
      const a = attacker(n);
      for (let i = 0; i < SIGN_IN_ATTEMPTS.perIpUser; i++) await a.signIn("bahati", `guess ${n}.${i}`);
      expect((await a.signIn("bahati", PASSWORD)).statusCode).toBe(429);
    }
    // ...and the officer, from her own address, signs in.
    expect((await new Visitor(t.app, "203.0.113.9").signIn("bahati", PASSWORD)).statusCode).toBe(303);
    // Guesses spread over many addresses still stop at the name's ceiling.
    let sent = 0;
    for (let n = 10; sent < SIGN_IN_ATTEMPTS.perUser; n++) {
      const a = attacker(n);
      for (let i = 0; i < SIGN_IN_ATTEMPTS.perIpUser && sent < SIGN_IN_ATTEMPTS.perUser; i++, sent++)
        await a.signIn("bahati", `spread guess ${sent}`);
    }
    expect((await new Visitor(t.app, "203.0.113.10").signIn("bahati", PASSWORD)).statusCode).toBe(429);
  });

  it("counts guesses sent side by side before checking any of them", async () => {
    await t.addStaff("chausiku", PASSWORD);
    const v = new Visitor(t.app);
    await v.get("/console/sign-in");
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => v.signIn("chausiku", `parallel guess ${i}`)),
    );
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
  });

  it("does not count a successful sign-in as a failure", async () => {
    await t.addStaff("dalila", PASSWORD);
    const v = new Visitor(t.app);
    for (let i = 0; i < 4; i++) await v.signIn("dalila", `guess ${i} of a password`);
    expect((await v.signIn("dalila", PASSWORD)).statusCode).toBe(303);
    // Four failures and a success: one failure still allowed before the pause.
    const fresh = new Visitor(t.app);
    expect((await fresh.signIn("dalila", "one more wrong guess")).statusCode).toBe(401);
    expect((await fresh.signIn("dalila", PASSWORD)).statusCode).toBe(429);
  });

  it("ends the session on sign-out: the old cookie opens nothing", async () => {
    const v = new Visitor(t.app);
    await v.signIn("amina", PASSWORD);
    const cookie = v.cookieHeader;
    expect((await v.get("/console/review")).statusCode).toBe(200);
    expect((await v.post("/console/sign-out", {})).statusCode).toBe(303);
    const replay = await t.app.inject({ method: "GET", url: "/console/review", headers: { cookie } });
    expect(replay.statusCode).toBe(303);
    expect(replay.headers.location).toMatch(/sign-in/);
    const api = await t.app.inject({ method: "GET", url: `/results/${caseId}`, headers: { cookie } });
    expect(api.statusCode).toBe(401);
  });

  it("lets a signed-in officer read any result through the results API", async () => {
    const v = new Visitor(t.app);
    await v.signIn("amina", PASSWORD);
    const res = await t.app.inject({
      method: "GET",
      url: `/results/${caseId}`,
      headers: { cookie: v.cookieHeader },
    });
    expect(res.statusCode).toBe(200);
  });

  it("ends the sessions of a disabled account at their next request", async () => {
    await t.addStaff("chidi", PASSWORD);
    const v = new Visitor(t.app);
    await v.signIn("chidi", PASSWORD);
    expect((await v.get("/console/review")).statusCode).toBe(200);
    const account = (await t.staff.get("chidi"))!;
    await t.staff.put({ ...account, disabled: true, version: account.version + 1 });
    expect((await v.get("/console/review")).statusCode).toBe(303);
  });

  it("serves farmers' photos to staff only, and never for the browser's cache", async () => {
    const withPhoto = await t.records.record(resultFixture(), {
      language: "en",
      source: "console",
      photo: await leafJpeg(64, 48),
    });
    const url = `/console/photos/${withPhoto.result.request_id}`;
    expect((await new Visitor(t.app).get(url)).statusCode).toBe(303);
    const v = new Visitor(t.app);
    await v.signIn("amina", PASSWORD);
    const shown = await v.get(url);
    expect(shown.statusCode).toBe(200);
    expect(shown.headers["content-type"]).toBe("image/jpeg");
    expect(shown.headers["cache-control"]).toBe("no-store");
  });

  it("lets only an administrator delete a kept photo", async () => {
    const photo = { data: Buffer.from("jpeg bytes"), type: "image/jpeg" };
    const at = new Date().toISOString();
    await t.records.examples.save(
      labelledExample({ id: caseId, code: caseCode, region: "KE", takenAt: at, decidedAt: at }),
      photo,
    );
    const officer = new Visitor(t.app);
    await officer.signIn("amina", PASSWORD);
    expect((await officer.get(`/console/cases/${caseCode}`)).body).not.toContain("Delete the kept photo");
    expect((await officer.post(`/console/examples/${caseId}/delete`, {})).statusCode).toBe(403);
    expect(await t.records.examples.get(caseId)).toBeDefined();

    await t.addStaff("dora", PASSWORD, "admin");
    const admin = new Visitor(t.app);
    await admin.signIn("dora", PASSWORD);
    expect((await admin.get(`/console/cases/${caseCode}`)).body).toContain("Delete the kept photo");
    expect((await admin.post(`/console/examples/${caseId}/delete`, {}, { csrf: false })).statusCode).toBe(
      403,
    );
    const deleted = await admin.post(`/console/examples/${caseId}/delete`, {});
    expect(deleted.statusCode).toBe(303);
    expect(await t.records.examples.get(caseId)).toBeUndefined();
    expect((await admin.get(`/console/cases/${caseCode}`)).body).toContain("The kept photo was deleted");
  });

  it("does not count signed-in pages against the API's per-IP budget; sign-in keeps one", async () => {
    const v = new Visitor(t.app);
    await v.signIn("amina", PASSWORD);
    const page = await v.get("/console/review");
    expect(page.headers["x-ratelimit-limit"]).toBeUndefined();
    const signIn = await v.post("/console/sign-in", { username: "amina", password: PASSWORD });
    expect(signIn.headers["x-ratelimit-limit"]).toBeDefined();
    // The sign-in page starts a session for its form: it is counted too.
    const form = await new Visitor(t.app).get("/console/sign-in");
    expect(form.headers["x-ratelimit-limit"]).toBeDefined();
    // So does every form sent: a refused one answers with a page whose own form starts a session.
    const forged = await t.app.inject({
      method: "POST",
      url: "/console/sign-out",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: "_csrf=forged",
    });
    expect(forged.statusCode).toBe(403);
    expect(forged.headers["x-ratelimit-limit"]).toBeDefined();
    expect((await v.post("/console/language", { lang: "fr" })).headers["x-ratelimit-limit"]).toBeDefined();
  });

  it("never logs or stores a password in clear", async () => {
    const stored = JSON.stringify(await t.staff.list());
    expect(stored).not.toContain(PASSWORD);
    expect(stored).toMatch(/\$argon2id\$v=19\$/);
    const logs = t.logs().join("\n");
    expect(logs).toContain("signed in");
    expect(logs).not.toContain(PASSWORD);
    expect(logs).not.toContain("not the password at all");
    expect(logs).not.toMatch(/cd_console=/);
  });
});

describe("the console's refusals", () => {
  it("are explained in the staff member's language, never in English only", async () => {
    const v = new Visitor(t.app);
    await v.signIn("amina", PASSWORD);
    await v.get("/console/review");
    await v.post("/console/language", { lang: "fr", next: "/console/review" });
    const gone = await v.get("/console/cases/ZZZZZZ");
    expect(gone.statusCode).toBe(404);
    expect(gone.body).toContain("Aucun résultat avec ce code : les résultats sont gardés 30 jours.");
    const malformed = await v.get("/console/photos/not-a-uuid");
    expect(malformed.statusCode).toBe(400);
    expect(malformed.body).toContain("Cette demande n&#39;est pas valide.");
    expect(malformed.body).not.toMatch(/must match format/);
  });
});

describe("the console's times", () => {
  it("are shown where the staff work (CONSOLE_TIME_ZONE), with the zone's name", async () => {
    const at = new Date("2026-11-29T07:40:00Z");
    expect(formatWhen(at, { lang: "en", timeZone: "Africa/Nairobi" })).toMatch(
      /Nov 29, 2026.*10:40.*(EAT|GMT\+3)/,
    );
    expect(formatTime(at, { lang: "en", timeZone: "UTC" })).toMatch(/07:40.*UTC/);
    expect(() => loadConfig({ CONSOLE_TIME_ZONE: "Nairobi" })).toThrow(
      /CONSOLE_TIME_ZONE must be an IANA time zone/,
    );
    expect(loadConfig({ CONSOLE_TIME_ZONE: "Africa/Nairobi" }).consoleTimeZone).toBe("Africa/Nairobi");
  });
});

describe("the outbreak view's filters", () => {
  it("show the region and weeks the address asked for, also ones the lists do not hold", async () => {
    const v = new Visitor(t.app);
    await v.signIn("amina", PASSWORD);
    const page = (await v.get("/console/outbreaks?region=TZ&weeks=52")).body;
    expect(page).toMatch(/<option value="TZ" selected="">/);
    expect(page).toMatch(/<option value="52" selected="">52<\/option>/);
    expect(page).not.toMatch(/<option value="12" selected/);
  });
});

describe("the language switch", () => {
  it("comes back to the same page with its query, so the sign-in keeps where it was going", async () => {
    const v = new Visitor(t.app);
    const target = "/console/cases/ABC234";
    const page = await v.get(`/console/sign-in?next=${encodeURIComponent(target)}`);
    const next = /name="next" value="([^"]+)"/.exec(page.body)?.[1]?.replaceAll("&amp;", "&");
    expect(next).toBe(`/console/sign-in?next=${encodeURIComponent(target)}`);
    const switched = await v.post("/console/language", { lang: "sw", next: next! });
    expect(switched.statusCode).toBe(303);
    expect(switched.headers.location).toBe(next);
  });
});

describe("the diagnose form refused", () => {
  it("says a photo over the upload limit is too large, in the staff member's words", async () => {
    const v = new Visitor(t.app);
    await v.signIn("amina", PASSWORD);
    await v.get("/console/diagnose");
    const res = await v.postMultipart(
      "/console/diagnose",
      { _csrf: v.csrf, language: "en", detail_level: "simple" },
      { data: Buffer.alloc(MAX_IMAGE_BYTES + 1, 0xff) },
    );
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain(`The photo is larger than ${MAX_IMAGE_BYTES / 1024 / 1024} MB.`);
  });

  it("comes back with everything typed but the photo, and says why", async () => {
    const v = new Visitor(t.app);
    await v.signIn("amina", PASSWORD);
    await v.get("/console/diagnose");
    const res = await v.postMultipart(
      "/console/diagnose",
      {
        _csrf: v.csrf,
        language: "sw",
        detail_level: "standard",
        crop_type: "maize",
        region: "Nakuru, Kenya",
        phone: "0712",
        description: "Madoa ya kahawia <majani ya chini>",
        consent: "yes",
      },
      {
        data: await leafJpeg(64, 48),
      },
    );
    expect(res.statusCode).toBe(422);
    expect(res.body).toMatch(/role="alert">[^<]+</);
    expect(res.body).toContain('value="Nakuru, Kenya"');
    expect(res.body).toContain('value="0712"');
    expect(res.body).toContain(">Madoa ya kahawia &lt;majani ya chini&gt;</textarea>");
    expect(res.body).toMatch(/<option value="maize" selected="">/);
    expect(res.body).toMatch(/<option value="sw" selected="">/);
    expect(res.body).toMatch(/<option value="standard" selected="">/);
    expect(res.body).toMatch(/name="consent" value="yes" checked=""/);
  });
});
