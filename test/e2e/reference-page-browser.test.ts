import { mkdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { launchChromium, watch } from "../support/chromium";
import { useSharedService } from "../support/service-fixture";

/**
 * The reference page in a real browser: Debian's chromium (installed by
 * .ci/run), never one a tool downloads, against `npm start`.
 */
const service = useSharedService();
let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

interface Visit {
  page: Page;
  requests: string[];
  errors: string[];
}

/** Opens a URL and waits until the page has rendered the reference (`shown`: a summary it renders). */
async function visit(url: string, shown = "List every order"): Promise<Visit> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  // Playwright's 30 s only catches a hang: on a busy machine a wrangler dev page load can take longer.
  page.setDefaultNavigationTimeout(90_000);
  page.setDefaultTimeout(90_000);
  const { requests, errors } = watch(page);
  await page.goto(url, { waitUntil: "networkidle" });
  await page.getByText(shown).first().waitFor();
  return { page, requests, errors };
}

interface DocumentedOperation {
  operationId: string;
  summary: string;
  tags: string[];
  deprecated?: boolean;
}

/** The section Scalar renders for an operation (its id ends with the operation's anchor). */
const sectionOf = (page: Page, tag: string, method: string, path: string) =>
  page.locator(`[id$="tag/${tag.toLowerCase()}/${method.toUpperCase()}${path}"]`).first();

describe("the API reference page in chromium", () => {
  it.each(["v1", "v2"])(
    "shows every operation of the served %s document, marks the deprecated one, and loads nothing from elsewhere",
    async (version) => {
      const document = (await (await service.current.call(`/${version}/openapi.json`)).json()) as {
        paths: Record<string, Record<string, DocumentedOperation>>;
      };
      const { page, requests, errors } = await visit(
        `${service.current.baseUrl}/${version}/docs`,
        version === "v1" ? "List every order" : "List orders, filtered",
      );
      try {
        const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
          Object.entries(methods).map(([method, operation]) => ({ path, method, ...operation })),
        );
        expect(operations).toHaveLength(version === "v1" ? 4 : 23);
        for (const operation of operations) {
          const section = sectionOf(page, operation.tags[0]!, operation.method, operation.path);
          await section.waitFor({ state: "attached" });
          // Scalar renders a section's content once it comes near the viewport.
          await section.scrollIntoViewIfNeeded();
          await expect.poll(() => section.innerText(), { timeout: 10_000 }).toContain(operation.summary);
          const text = await section.innerText();
          expect(text.startsWith("Deprecated"), operation.operationId).toBe(operation.deprecated === true);
        }
        await page.mouse.wheel(0, -100_000);
        mkdirSync("test-artifacts", { recursive: true });
        await page.screenshot({ path: `test-artifacts/reference-page-${version}.png`, fullPage: false });
        expect(errors).toEqual([]);
        const elsewhere = requests.filter((url) => !["127.0.0.1", "localhost"].includes(new URL(url).hostname));
        expect(elsewhere).toEqual([]);
        expect(requests.some((url) => url.endsWith("/v1/docs/scalar.js"))).toBe(true);
      } finally {
        await page.close();
      }
    },
  );

  it("opens the deprecated operation's section from its Link header", async () => {
    const response = await service.current.call("/v1/pets/1");
    const link = /^<([^>]+)>; rel="deprecation"; type="text\/html"$/.exec(response.headers.get("Link") ?? "")?.[1];
    expect(link).toBeDefined();
    // BASE_URL names localhost; the service listens on 127.0.0.1.
    const { page, errors } = await visit(link!.replace("//localhost:", "//127.0.0.1:"));
    try {
      const section = sectionOf(page, "pets", "get", "/pets/{petId}");
      // Scrolled to: the section starts at the top of the viewport (give or take a pixel of rounding).
      await expect
        .poll(async () => Math.abs((await section.boundingBox())?.y ?? Infinity), { timeout: 10_000 })
        .toBeLessThan(50);
      expect(await section.innerText()).toMatch(/^Deprecated/);
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
