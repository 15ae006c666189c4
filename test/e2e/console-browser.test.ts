/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { useSharedService } from "../support/service-fixture";
import { useKeysCommand } from "../support/npm-script";
import {
  expectAccessible,
  expectLightPage,
  launchChromium,
  screenshot,
  watch,
  type Watched,
} from "../support/chromium";

/**
 * The console (docs/api.md#the-console) in a real browser: Debian's chromium,
 * never one a tool downloads, against `npm start`. One signed-in page walks
 * the views as a caller would; other contexts sign in by link, at 375 px, and
 * with a key that lacks scopes. Every view is checked with axe-core, and
 * none may trip the page's Content-Security-Policy. The screenshots in
 * docs/api.md are taken here (CONSOLE_SCREENSHOTS=docs/images keeps them).
 */
const service = useSharedService();
const keys = useKeysCommand(() => service.statePath);
const root = () => service.current.baseUrl.replace(/\/v1$/, "");
const ALL_SCOPES = "orders:read,orders:write,webhooks:manage,keys:manage";

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A receiver the test runs: /good answers 200, /flaky 500 while `flaky.failing`, then 200. */
const received: Received[] = [];
const flaky = { failing: true };
let receiver: Server;
let receiverRoot = "";
let browser: Browser;

interface Issued {
  id: string;
  key: string;
}

async function issueKey(name: string, scopes = ALL_SCOPES): Promise<Issued> {
  const created = await keys.run("create", "--plan", "pro", "--scopes", scopes, "--name", name, "--json");
  expect(created.status, created.stderr).toBe(0);
  return JSON.parse(created.stdout) as Issued;
}

/**
 * Pending orders to cancel, each used once: every cancel is an order event delivered to the account's endpoints. From
 * the second page of pending orders: the first holds the demo's and the synthetic ones other files of the shared
 * service cancel by id (the client's 2^53 + 1, among others).
 */
let pending: string[] = [];
async function cancelAnOrder(): Promise<string> {
  if (pending.length === 0) {
    const pageOf = async (query: string) => {
      const response = await service.current.call(`/v2/store/orders?status=pending&${query}`);
      expect(response.status).toBe(200);
      return (await response.json()) as { data: { id: string }[]; nextCursor: string | null };
    };
    const { nextCursor } = await pageOf("limit=100");
    pending = (await pageOf(`limit=50&cursor=${encodeURIComponent(nextCursor!)}`)).data.map(({ id }) => id);
  }
  const id = pending.shift()!;
  const response = await service.current.call(`/v2/store/orders/${id}`, { method: "DELETE" });
  expect(response.status).toBe(204);
  return id;
}

beforeAll(async () => {
  receiver = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      received.push({ path: request.url ?? "", headers: request.headers, body });
      const failing = request.url === "/flaky" && flaky.failing;
      response
        .writeHead(failing ? 500 : 200, { "Content-Type": "text/plain" })
        .end(failing ? "flaky says no" : `ok from ${request.url}`);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverRoot = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

interface Visit extends Watched {
  context: BrowserContext;
  page: Page;
}

async function open(width = 1280): Promise<Visit> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, timezoneId: "UTC", locale: "en-GB" });
  // Playwright's 30 s only catches a hang: on a busy machine (an npm start serving traffic beside the tests) a wrangler
  // dev page load can take longer. The promises the tests check (a session ended within 5 s) keep their own limits.
  context.setDefaultNavigationTimeout(90_000);
  context.setDefaultTimeout(90_000);
  const page = await context.newPage();
  const watched = watch(page);
  // Confirmations (revoke, delete) are accepted, as the person at the keyboard would.
  page.on("dialog", (dialog) => void dialog.accept());
  return { context, page, ...watched };
}

/**
 * What went wrong on the page: a CSP violation, an uncaught error, anything
 * it logged; not Chromium's note of a 401, which the page answers by asking
 * to sign in (with no session, its first call is one).
 */
const pageErrors = (visit: Visit) =>
  visit.errors.filter(
    (error) => !/^error: Failed to load resource: the server responded with a status of 401/.test(error),
  );

/** Signs in by typing the key and pressing Enter: the keyboard alone. */
async function signInWithKey(visit: Visit, key: string): Promise<void> {
  const { page } = visit;
  await page.goto(`${root()}/console`);
  await page.getByRole("heading", { name: "Sign in to the Store Orders console" }).waitFor();
  await page.keyboard.press("Tab");
  expect(await page.evaluate(() => document.activeElement?.id)).toBe("api-key");
  await page.keyboard.type(key);
  await page.keyboard.press("Enter");
  await page.getByRole("heading", { name: "Overview" }).waitFor();
}

const goTo = async (page: Page, view: string) => {
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: view }).click();
  await page.getByRole("heading", { name: view, level: 1 }).waitFor();
};

/** Waits for what the receiver got at `path` to satisfy `found`. */
async function receivedAt(path: string, found: (request: Received) => boolean, timeout = 30_000): Promise<Received> {
  await expect.poll(() => received.some((request) => request.path === path && found(request)), { timeout }).toBe(true);
  return received.find((request) => request.path === path && found(request))!;
}

const verifierHeaders = (request: Received) => ({
  "webhook-id": String(request.headers["webhook-id"]),
  "webhook-timestamp": String(request.headers["webhook-timestamp"]),
  "webhook-signature": String(request.headers["webhook-signature"]),
});

describe("the console in chromium, against npm start", () => {
  let owner: Issued;
  let visit: Visit;
  let endpointSecret = "";
  let rotatedSecret = "";
  let newKey = "";

  beforeAll(async () => {
    owner = await issueKey("Console owner");
    visit = await open();
  });
  afterAll(async () => {
    await visit?.context.close();
  });

  it("serves the page under 150 KB compressed, with no inline script or style allowed and nothing from another host", async () => {
    await expectLightPage(root(), "/console", "console");
  });

  it("signs in with a key, by keyboard alone; keeps no key in the browser; the cookie is HttpOnly and SameSite=Strict", async () => {
    await signInWithKey(visit, owner.key);
    const { page, context } = visit;
    await expectAccessible(page, "overview");
    await page.getByText("Console owner").first().waitFor();
    expect(await page.locator("[data-remaining=minute]").innerText()).toMatch(/^\d+$/);
    const cookies = await context.cookies();
    expect(cookies.map(({ name, httpOnly, sameSite }) => ({ name, httpOnly, sameSite }))).toEqual([
      { name: "so_console", httpOnly: true, sameSite: "Strict" },
    ]);
    expect(cookies[0]!.value).not.toContain(owner.key);
    const storage = await page.evaluate(() => ({
      local: localStorage.length,
      session: sessionStorage.length,
      cookie: document.cookie,
    }));
    expect(storage).toEqual({ local: 0, session: 0, cookie: "" });
    expect(await page.content()).not.toContain(owner.key);
    expect(visit.requests.filter((url) => url.includes(owner.key))).toEqual([]);
    await screenshot(page, "console-overview");
  });

  it("draws the usage chart with the numbers the API answers, and shows them at the pointer", async () => {
    const { page } = visit;
    const answered = page.waitForResponse((response) => response.url().includes("/v2/usage?"));
    await goTo(page, "Usage");
    const history = (await (await answered).json()) as {
      granularity: string;
      buckets: { start: string; admitted: number; refused: number }[];
    };
    expect(history.granularity).toBe("hour");
    await page.locator(".chart canvas").first().waitFor();
    await page.locator("summary", { hasText: "The numbers" }).click();
    const rows = await page
      .locator("#usage-table tbody tr")
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)));
    expect(rows).toEqual(
      history.buckets.map((bucket) => [bucket.start, String(bucket.admitted), String(bucket.refused)]),
    );
    // This key's own requests are in the current hour: the chart is not empty.
    expect(history.buckets.at(-1)!.admitted).toBeGreaterThan(0);
    const over = (await page.locator(".u-over").boundingBox())!;
    await page.mouse.move(over.x + over.width - 1, over.y + over.height / 2);
    const legend = await page.locator(".u-legend .u-value").allInnerTexts();
    const bucket = history.buckets.find(({ start }) => start === legend[0]);
    expect(bucket, `the legend shows ${legend.join(" | ")}`).toBeDefined();
    expect(legend.slice(1).map((value) => Number(value.replaceAll(",", "")))).toEqual([
      bucket!.admitted,
      bucket!.refused,
    ]);
    await expectAccessible(page, "usage");
    await screenshot(page, "console-usage");
    const perMinute = page.waitForResponse((response) => response.url().includes("granularity=minute"));
    await page.getByLabel("Granularity").selectOption("minute");
    const minutes = (await (await perMinute).json()) as { buckets: unknown[] };
    expect(minutes.buckets).toHaveLength(60);
    await expect.poll(() => page.locator("#usage-table tbody tr").count(), { timeout: 30_000 }).toBe(60);
  });

  it("adds an endpoint (its secret shown once), sends a test event the receiver verifies, and shows the delivery log with each attempt", async () => {
    const { page } = visit;
    await goTo(page, "Webhooks");
    await page.getByLabel("URL").fill(`${receiverRoot}/good`);
    await page.getByRole("button", { name: "Add endpoint" }).click();
    endpointSecret = await page.getByLabel("Its signing secret").inputValue();
    expect(endpointSecret).toMatch(/^whsec_/);
    await page.getByRole("link", { name: "Open the endpoint" }).click();
    await page.getByRole("heading", { name: "Endpoint", level: 1 }).waitFor();
    // The secret was shown once: the endpoint's page does not have it.
    expect(await page.content()).not.toContain(endpointSecret);
    await page.getByRole("button", { name: "Send a test event" }).click();
    await page.getByText(/Test event evt_test_[0-9a-f]+ delivered: 200/).waitFor();
    const test = await receivedAt("/good", (request) => String(request.headers["webhook-id"]).startsWith("evt_test_"));
    expect(new Webhook(endpointSecret).verify(test.body, verifierHeaders(test))).toMatchObject({
      type: "webhook.test",
    });

    const orderId = await cancelAnOrder();
    const delivery = await receivedAt("/good", (request) => request.body.includes(`"id":"${orderId}"`));
    expect(new Webhook(endpointSecret).verify(delivery.body, verifierHeaders(delivery))).toMatchObject({
      type: "order.cancelled",
    });
    const row = page.locator(`tr[data-delivery-id][data-outcome=delivered]`, {
      hasText: String(delivery.headers["webhook-id"]),
    });
    await row.waitFor({ timeout: 15_000 });
    await row.getByText(/1 attempt/).click();
    await expect.poll(() => row.innerText(), { timeout: 30_000 }).toMatch(/200 · \d+ ms/);
    expect(await row.innerText()).toContain("ok from /good");
    await expectAccessible(page, "webhook endpoint");
    await screenshot(page, "console-webhook");
  });

  it("rotates the endpoint's secret: during the overlap a delivery verifies with the old secret and with the new", async () => {
    const { page } = visit;
    await page.getByLabel("Old secret also signs for").selectOption({ label: "1 hour" });
    await page.getByRole("button", { name: "Rotate secret" }).click();
    rotatedSecret = await page.getByLabel("The new signing secret").inputValue();
    expect(rotatedSecret).toMatch(/^whsec_/);
    expect(rotatedSecret).not.toBe(endpointSecret);
    const orderId = await cancelAnOrder();
    const delivery = await receivedAt("/good", (request) => request.body.includes(`"id":"${orderId}"`));
    expect(String(delivery.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    for (const secret of [endpointSecret, rotatedSecret]) {
      expect(new Webhook(secret).verify(delivery.body, verifierHeaders(delivery))).toMatchObject({
        type: "order.cancelled",
      });
    }
  });

  it("edits the endpoint's URL and types, disables it and enables it again", async () => {
    const { page } = visit;
    await page.getByLabel("URL").fill(`${receiverRoot}/good?edited`);
    for (const type of ["order.created", "order.shipped", "order.delivered", "order.updated", "order.deleted"]) {
      await page.locator(`#edit-endpoint-${type.replace(".", "\\.")}`).uncheck();
    }
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText("Saved.").waitFor();
    const facts = page.locator("dl.facts");
    await expect.poll(() => facts.innerText(), { timeout: 30_000 }).toContain(`${receiverRoot}/good?edited`);
    expect(await facts.innerText()).toMatch(/Event types\s+order\.cancelled\n/);
    await page.getByRole("button", { name: "Disable" }).click();
    await expect
      .poll(() => page.locator("#endpoint-status").innerText(), { timeout: 30_000 })
      .toMatch(/^disabled by owner/);
    await page.getByRole("button", { name: "Enable" }).click();
    await expect.poll(() => page.locator("#endpoint-status").innerText(), { timeout: 30_000 }).toBe("enabled");
  });

  it("leaves an endpoint's page for good: reads it made that answer after the reader left draw nothing", async () => {
    const { page } = visit;
    const endpointPage = new URL(page.url()).hash;
    await goTo(page, "Overview");
    // The endpoint's read is held until the reader has left its page; then it and the log's read answer.
    let asked!: () => void;
    const reading = new Promise<void>((resolve) => (asked = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const endpointRead = /\/v2\/webhook-endpoints\/we_[^/]+$/;
    await page.route(endpointRead, async (route) => {
      asked();
      await held;
      await route.continue();
    });
    await page.evaluate((hash) => (location.hash = hash), endpointPage);
    await reading;
    await goTo(page, "Overview");
    // Drawn again, the page would read the endpoint again at once, and every 5 s after.
    let readsAfterLeaving = 0;
    const countReads = (request: { url(): string }) => {
      if (endpointRead.test(new URL(request.url()).pathname)) readsAfterLeaving += 1;
    };
    page.on("request", countReads);
    const logAnswered = page.waitForResponse((response) => new URL(response.url()).pathname.endsWith("/deliveries"));
    release();
    await logAnswered;
    await page.unroute(endpointRead);
    // Frames for whatever the late answers would draw, and a read its effects would make.
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 200))));
    page.off("request", countReads);
    expect(readsAfterLeaving).toBe(0);
    expect(await page.getByRole("heading", { name: "Endpoint" }).count()).toBe(0);
    expect(await page.getByRole("heading", { name: "Overview", level: 1 }).count()).toBe(1);
    await page.evaluate((hash) => (location.hash = hash), endpointPage);
    await page.getByRole("heading", { name: "Endpoint", level: 1 }).waitFor();
  });

  it("shows a fifo endpoint's deliveries held behind a failing one and the failing banner; retries one by its button, the rest since a time", async () => {
    const { page } = visit;
    const since = new Date(Date.now() - 1000).toISOString().slice(0, 19);
    await goTo(page, "Webhooks");
    await page.getByLabel("URL").fill(`${receiverRoot}/flaky`);
    await page.getByLabel("Ordering").selectOption("fifo");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await page.getByRole("link", { name: "Open the endpoint" }).click();
    await page.getByRole("heading", { name: "Endpoint", level: 1 }).waitFor();
    // Three events, one at a time: while the first is retried (the local schedule, seconds long), the others wait
    // behind it, and so on down the line: the last is held for about 12 s.
    for (let i = 0; i < 3; i++) await cancelAnOrder();
    const held = page.locator("tr[data-delivery-id][data-outcome=pending]", { hasText: /held behind evt_\d+/ });
    await held.first().waitFor({ timeout: 60_000 });
    // Every attempt fails: the owner is warned on the endpoint's page and on the list.
    const banner = page
      .getByRole("alert")
      .filter({ hasText: `Every delivery to ${receiverRoot}/flaky has failed since` });
    await banner.waitFor({ timeout: 30_000 });
    await expectAccessible(page, "failing endpoint");
    await screenshot(page, "console-webhook-failing");
    const failed = page.locator("tr[data-delivery-id][data-outcome=failed]");
    await expect.poll(() => failed.count(), { timeout: 120_000 }).toBe(3);
    // One delivery spending its schedule no longer disables the endpoint: that is a matter of days of failing.
    expect(await page.locator("#endpoint-status").innerText()).toBe("enabled");
    flaky.failing = false;
    const first = failed.first();
    const eventId = (await first.locator("code").innerText()).trim();
    await first.getByRole("button", { name: `Retry ${eventId}` }).click();
    await page.getByText(`Delivery of ${eventId} sent again.`).waitFor();
    await page.locator(`tr[data-outcome=delivered]`, { hasText: eventId }).waitFor({ timeout: 30_000 });
    await page.getByLabel("Since (your time)").fill(since);
    await page.getByRole("button", { name: "Recover" }).click();
    await page.getByText(/^2 failed deliveries sent again/).waitFor();
    await expect.poll(() => page.locator("tr[data-outcome=delivered]").count(), { timeout: 60_000 }).toBe(3);
    // Delivering again, it is failing no more.
    await expect.poll(() => banner.count(), { timeout: 30_000 }).toBe(0);
  });

  it("follows the event feed by type, and its live tail shows a change as it happens", async () => {
    const { page } = visit;
    await goTo(page, "Events");
    await page.getByLabel("Type").selectOption("order.cancelled");
    await page.locator("#events-table tbody tr").first().waitFor();
    expect(new Set(await page.locator("#events-table tbody tr td:nth-child(2)").allInnerTexts())).toEqual(
      new Set(["order.cancelled"]),
    );
    // The tail's first long poll is out before the change is made.
    const polling = page.waitForRequest((request) => request.url().includes("after=latest"));
    await page.getByRole("button", { name: "Start live tail" }).click();
    await page.getByText("Live: new events appear").waitFor();
    await expect.poll(() => page.locator("#events-table tbody tr").count(), { timeout: 30_000 }).toBe(0);
    await polling;
    await page.waitForTimeout(500);
    const orderId = await cancelAnOrder();
    const row = page.locator("#events-table tbody tr", { hasText: orderId });
    await row.waitFor({ timeout: 25_000 });
    expect(await row.innerText()).toContain("order.cancelled");
    await expectAccessible(page, "events");
    await screenshot(page, "console-events");
    await page.getByRole("button", { name: "Stop live tail" }).click();
  });

  it("rotates the signed-in key (the new key shown once), shows both, and revokes the old one early", async () => {
    const { page } = visit;
    await goTo(page, "Keys");
    await expect.poll(() => page.locator("#keys-table tbody tr").count(), { timeout: 30_000 }).toBe(1);
    await page.getByLabel("Grace period").selectOption({ label: "1 hour" });
    await page.getByRole("button", { name: "Rotate" }).click();
    newKey = await page.getByLabel("Your new key").inputValue();
    expect(newKey).toMatch(/^so_test_[0-9A-Za-z]{38}$/);
    // The page moved to the new key: its header says so, and a second rotation would rotate the new key.
    await page.getByText("This console now uses the new key.").waitFor();
    expect(await page.locator("header .who code").innerText()).toBe(`${newKey.slice(0, 12)}…`);
    await expect.poll(() => page.locator("#keys-table tbody tr").count(), { timeout: 30_000 }).toBe(2);
    const oldRow = page.locator(`tr[data-key-id=${owner.id}]`);
    expect(await oldRow.innerText()).toContain("expiring");
    await expectAccessible(page, "keys");
    await screenshot(page, "console-keys");
    await oldRow.getByRole("button", { name: /^Revoke .* now$/ }).click();
    await expect.poll(() => oldRow.innerText(), { timeout: 30_000 }).toContain("revoked");
    expect(
      (await fetch(`${root()}/v2/console/session`, { headers: { Authorization: `Bearer ${owner.key}` } })).status,
    ).toBe(401);
    // The session moved to the new key: the page goes on.
    const session = await page.evaluate(
      async () => (await (await fetch("/v2/console/session")).json()) as { key: { id: string } },
    );
    expect(session.key.id).not.toBe(owner.id);
    await goTo(page, "Overview");
    // Left: no secret or key on the page after its one showing.
    for (const secret of [newKey, endpointSecret, rotatedSecret]) expect(await page.content()).not.toContain(secret);
    expect(
      visit.requests.filter((url) =>
        [newKey, endpointSecret, rotatedSecret, owner.key].some(
          (secret) => url.includes(encodeURIComponent(secret)) || url.includes(secret),
        ),
      ),
    ).toEqual([]);
  });

  it("signs out: the page asks for a key again, and a copy of the cookie is refused", async () => {
    const { page, context } = visit;
    const [cookie] = await context.cookies();
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByText("Signed out.").waitFor();
    expect(await context.cookies()).toEqual([]);
    const replayed = await fetch(`${root()}/v2/console/session`, {
      headers: { Cookie: `so_console=${cookie!.value}` },
    });
    expect(replayed.status).toBe(401);
    expect(pageErrors(visit)).toEqual([]);
  });
});

describe("a key rotated away, signed in", () => {
  it("is offered no actions on the key that replaced it, and told why; the replacement is offered them", async () => {
    const leaked = await issueKey("rotated away in the console test");
    const rotated = await fetch(`${root()}/v2/keys/${leaked.id}/rotate`, {
      method: "POST",
      headers: { Authorization: `Bearer ${leaked.key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ graceSeconds: 86_400 }),
    });
    expect(rotated.status).toBe(201);
    const replacement = (await rotated.json()) as Issued;
    for (const [signedIn, other, offered] of [
      [leaked, replacement, false],
      [replacement, leaked, true],
    ] as const) {
      const visit = await open();
      try {
        await signInWithKey(visit, signedIn.key);
        await goTo(visit.page, "Keys");
        const otherRow = visit.page.locator(`tr[data-key-id=${other.id}]`);
        await otherRow.waitFor();
        expect(
          await otherRow.getByRole("button", { name: /^Revoke / }).count(),
          `${signedIn === leaked ? "the leaked key" : "its replacement"} offered a revocation`,
        ).toBe(offered ? 2 : 0);
        const told = visit.page.getByText("it can act only on itself");
        expect(await told.count()).toBe(offered ? 0 : 1);
        expect(pageErrors(visit)).toEqual([]);
      } finally {
        await visit.context.close();
      }
    }
  });
});

describe("a key revoked as leaked", () => {
  it("is shown with where it was found and the endpoint it disabled; enabling that endpoint again asks for its URL", async () => {
    const leaked = await issueKey("leaked in the console test");
    const plantedUrl = `${receiverRoot}/planted`;
    const made = await fetch(`${root()}/v2/webhook-endpoints`, {
      method: "POST",
      headers: { Authorization: `Bearer ${leaked.key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ url: plantedUrl }),
    });
    expect(made.status).toBe(201);
    const planted = ((await made.json()) as { id: string }).id;
    const rotated = await fetch(`${root()}/v2/keys/${leaked.id}/rotate`, {
      method: "POST",
      headers: { Authorization: `Bearer ${leaked.key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ graceSeconds: 86_400 }),
    });
    const replacement = (await rotated.json()) as Issued;
    const foundAt = "https://github.com/octocat/Hello-World/blob/main/.env";
    const revoked = await keys.run("revoke", leaked.id, "--leaked", "--found-at", foundAt, "--base-url", root());
    expect(revoked.status, revoked.stderr).toBe(0);
    expect(revoked.stderr).toContain(planted);
    const visit = await open();
    try {
      await signInWithKey(visit, replacement.key);
      await goTo(visit.page, "Keys");
      const told = visit.page.locator(`[data-leaked-key=${leaked.id}]`);
      await told.waitFor();
      const text = await told.innerText();
      expect(text).toContain("revoked as leaked");
      expect(text).toContain(foundAt);
      expect(text).toContain(planted);
      expect(text).toContain(replacement.id);
      expect(await visit.page.locator(`tr[data-key-id=${replacement.id}]`).innerText()).toContain(
        `made by the leaked key ${leaked.id}`,
      );
      await screenshot(visit.page, "console-leaked-key");
      await expectAccessible(visit.page, "the keys view with a leaked key");
      await visit.page.goto(`${root()}/console#/webhooks/${planted}`);
      await visit.page.locator("#confirm-url-form").waitFor();
      expect(await visit.page.locator("#endpoint-status").innerText()).toContain("revoked as leaked");
      await visit.page.fill("#confirm-url", `${receiverRoot}/somewhere-else`);
      await visit.page.locator("#confirm-url-form").getByRole("button", { name: "Enable" }).click();
      await visit.page.getByText("Check that URL is yours").waitFor();
      expect(await visit.page.locator("#endpoint-status").innerText()).toMatch(/^disabled/);
      await visit.page.fill("#confirm-url", plantedUrl);
      await visit.page.locator("#confirm-url-form").getByRole("button", { name: "Enable" }).click();
      await expect.poll(() => visit.page.locator("#endpoint-status").innerText(), { timeout: 30_000 }).toBe("enabled");
      // The one refusal the test asked for (the wrong URL), as Chromium notes it; nothing else.
      expect(pageErrors(visit).filter((error) => !/status of 409 \(Conflict\)/.test(error))).toEqual([]);
    } finally {
      await visit.context.close();
    }
  });
});

describe("a link's fragment", () => {
  it("builds no path from \\, ?, #, %2F or .. in an endpoint's id: the page says so and sends nothing but GETs, whatever is clicked", async () => {
    const holder = await issueKey("fragments in the console test");
    const visit = await open();
    const sent: string[] = [];
    try {
      await signInWithKey(visit, holder.key);
      // Signed in: from here on, every request but a read is one a bent path made.
      visit.page.on("request", (request) => {
        if (new URL(request.url()).pathname.startsWith("/v2") && request.method() !== "GET")
          sent.push(`${request.method()} ${request.url()}`);
      });
      const fragments = [
        `we_00000000000000000000\\..\\..\\keys\\${holder.id}\\revoke?`,
        "we_00000000000000000000?x",
        "we_00000000000000000000%2F..%2F..%2Fkeys",
        `..%2Fkeys%2F${holder.id}%2Frevoke`,
        "we_00000000000000000000#test",
      ];
      for (const fragment of fragments) {
        await visit.page.goto(`${root()}/console#/webhooks/${fragment}`);
        await visit.page
          .getByText(/is not an endpoint id/)
          .first()
          .waitFor();
        for (const button of await visit.page.locator("main button").all()) {
          if ((await button.isVisible()) && (await button.textContent()) !== "Sign out") await button.click();
        }
      }
      expect(sent).toEqual([]);
    } finally {
      await visit.context.close();
    }
  });
});

describe("signing in with an operator's link, and ending with the key", () => {
  it("signs in once with `npm run keys -- console-link`; the link is then refused; a revoked key's session ends within 5 s", async () => {
    const holder = await issueKey("Link holder");
    const made = await keys.run("console-link", holder.id, "--base-url", root());
    expect(made.status, made.stderr).toBe(0);
    expect(made.stderr).toMatch(/works once, until/);
    // The link names the service's BASE_URL (localhost); the service listens on 127.0.0.1.
    const link = made.stdout
      .trim()
      .replace("//localhost:", "//127.0.0.1:")
      .replace(/^http:\/\/[^/]+/, root());
    expect(link).toMatch(/\/console#link=[A-Za-z0-9_-]{43}$/);
    const first = await open();
    const second = await open();
    try {
      // Signed in already, with another key: the link asks first (accepted), then replaces the session.
      const other = await issueKey("Someone else");
      await signInWithKey(first, other.key);
      const asked = first.page.waitForEvent("dialog");
      await first.page.goto(link);
      expect((await asked).message()).toContain("You are signed in as Someone else");
      await expect
        .poll(() => first.page.locator("header .who").innerText(), { timeout: 30_000 })
        .toContain("Link holder");
      await first.page.getByRole("heading", { name: "Overview" }).waitFor();
      // The token leaves the address bar at once.
      expect(first.page.url()).not.toContain("#link=");
      await second.page.goto(link);
      await second.page.getByText(/This sign-in link was used already/).waitFor();
      await expectAccessible(second.page, "sign-in");

      const revoked = await keys.run("revoke", holder.id, "--base-url", root());
      expect(revoked.status, revoked.stderr).toBe(0);
      // Any call the page makes from now on is refused: moving to a view makes one. Within a lease's length is held
      // with the clock injected (test/workers/console/console-sessions.test.ts); here, that the page says so.
      const views = ["Usage", "Overview"];
      await expect
        .poll(
          async () => {
            const view = views.reverse()[0]!;
            await first.page
              .getByRole("navigation", { name: "Console" })
              .getByRole("link", { name: view })
              .click({ timeout: 250 })
              .catch(() => undefined);
            return first.page.getByRole("heading", { name: "Sign in to the Store Orders console" }).isVisible();
          },
          { timeout: 30_000, interval: 250 },
        )
        .toBe(true);
      expect(pageErrors(first)).toEqual([]);
    } finally {
      await first.context.close();
      await second.context.close();
    }
  });
});

describe("at 375 px, and with fewer scopes", () => {
  it("reads every view at 375 px wide without sideways scrolling, and a key without a scope is told which it lacks", async () => {
    const reader = await issueKey("Narrow reader", "orders:read");
    const narrow = await open(375);
    try {
      await signInWithKey(narrow, reader.key);
      for (const view of ["Overview", "Usage", "Keys", "Webhooks", "Events"]) {
        await goTo(narrow.page, view);
        await narrow.page.waitForTimeout(300);
        const width = await narrow.page.evaluate(() => document.documentElement.scrollWidth);
        expect(width, view).toBeLessThanOrEqual(375);
        await expectAccessible(narrow.page, `${view} at 375 px`);
      }
      await goTo(narrow.page, "Keys");
      await narrow.page.getByText(/lacks the keys:manage scope/).waitFor();
      await goTo(narrow.page, "Webhooks");
      await narrow.page.getByText(/lacks the webhooks:manage scope/).waitFor();
      expect(pageErrors(narrow)).toEqual([]);
    } finally {
      await narrow.context.close();
    }
  });
});
