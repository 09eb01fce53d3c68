import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type BrowserContext, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM } from "../support/chromium.js";
import { testApp } from "./support/app.js";

type App = Awaited<ReturnType<typeof testApp>>["app"];

let app: App;
let base: string;
let context: BrowserContext;
let profile: string;
const requested: string[] = [];
const consoleErrors: string[] = [];

beforeAll(async () => {
  ({ app } = await testApp());
  base = await app.listen({ port: 0, host: "127.0.0.1" });
  profile = await mkdtemp(path.join(tmpdir(), "chromium-profile-"));
  context = await chromium.launchPersistentContext(profile, CHROMIUM);
  // Every request any page makes, workers included; anything off-host is also refused outright.
  context.on("request", (request) => requested.push(request.url()));
  await context.route(
    (url) => url.origin !== new URL(base).origin && url.protocol.startsWith("http"),
    (route) => route.abort(),
  );
}, 60_000);

afterAll(async () => {
  await context?.close();
  await rm(profile, { recursive: true, force: true });
  await app.close();
});

function offHost(): string[] {
  const origin = new URL(base).origin;
  return requested.filter(
    (url) => !url.startsWith(origin) && !url.startsWith("data:") && !url.startsWith("blob:"),
  );
}

describe("documentation pages in headless Chromium", () => {
  it("renders the operations in Swagger UI (/docs) with no request to another host", async () => {
    const page = await context.newPage();
    page.on("console", (m) => m.type() === "error" && consoleErrors.push(`docs: ${m.text()}`));
    await page.goto(`${base}/docs`, { waitUntil: "networkidle" });
    await page.locator(".opblock").first().waitFor({ timeout: 20_000 });
    const paths = await page.locator(".opblock-summary-path").allTextContents();
    expect(paths.map((p) => p.replace(/\u200b/g, ""))).toEqual(
      expect.arrayContaining(["/diagnosis/", "/diagnoses/", "/health"]),
    );
    await page.locator(".opblock-summary-path", { hasText: "/health" }).click();
    await page.getByText("Service status").first().waitFor();
    expect(offHost()).toEqual([]);
    expect(requested.some((u) => u.endsWith("/docs/json"))).toBe(true);
    await page.close();
  });

  it("renders the operations in ReDoc (/redoc) with no request to another host", async () => {
    const page = await context.newPage();
    page.on("console", (m) => m.type() === "error" && consoleErrors.push(`redoc: ${m.text()}`));
    await page.goto(`${base}/redoc`, { waitUntil: "networkidle" });
    // One h2 per operation, titled by its summary.
    const operation = (title: RegExp) => page.locator("h2").filter({ hasText: title });
    await operation(/^Diagnose a plant photo\s*$/).waitFor({ timeout: 20_000 });
    await operation(/alias of \/diagnosis\//).waitFor();
    await operation(/^Health status\s*$/).waitFor();
    const text = (await page.locator("body").textContent()) ?? "";
    expect(text).toContain("/diagnosis/");
    expect(text).toContain("user_data");
    expect(requested.some((u) => u.endsWith("/openapi.json"))).toBe(true);
    expect(requested.some((u) => u.endsWith("/redoc/redoc.standalone.js"))).toBe(true);
    expect(offHost()).toEqual([]);
    await page.close();
  });

  it("logged no console errors (a CSP violation or a failed asset would show here)", () => {
    expect(consoleErrors).toEqual([]);
  });
});
