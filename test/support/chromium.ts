/// <reference lib="dom" />
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { createRequire } from "node:module";
import { expect } from "vitest";
import { chromium, type Browser, type Page } from "playwright-core";

/**
 * Debian's chromium (installed by .ci/run), never one a tool downloads: headless, no sandbox, nothing fetched in the
 * background.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
    ],
  });
}

export interface Watched {
  /** Every URL the page asked for. */
  requests: string[];
  /** Console errors and warnings (a CSP violation is one), and uncaught errors. */
  errors: string[];
}

/** Records what a page asks for and what goes wrong on it, from now on. */
export function watch(page: Page): Watched {
  const watched: Watched = { requests: [], errors: [] };
  page.on("request", (request) => watched.requests.push(request.url()));
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning")
      watched.errors.push(`${message.type()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => watched.errors.push(`page error: ${error.message}`));
  return watched;
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/**
 * The view's accessibility: no serious or critical violation (axe-core, injected through the debugger, which no CSP
 * governs).
 */
export async function expectAccessible(page: Page, view: string): Promise<void> {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const result = await (
      window as unknown as {
        axe: {
          run(
            context: Document,
          ): Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>;
        };
      }
    ).axe.run(document);
    return result.violations
      .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
      .map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`);
  });
  expect(violations, view).toEqual([]);
}

/**
 * A screenshot in test-artifacts/, kept in the folder CONSOLE_SCREENSHOTS names as well (docs/images for the docs'
 * pictures).
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync("test-artifacts", { recursive: true });
  const path = `test-artifacts/${name}.png`;
  await page.screenshot({ path, fullPage: false });
  const keep = process.env.CONSOLE_SCREENSHOTS;
  if (keep) copyFileSync(path, `${keep}/${name}.png`);
}

/**
 * A console's page as a browser first loads it: a policy with no inline script
 * or style, its one script and one stylesheet beside it (`<path>/<name>.js`,
 * `.css`), nothing from another host, and all of it under 150 KB compressed.
 */
export async function expectLightPage(root: string, path: string, name: string): Promise<void> {
  const page = await fetch(`${root}${path}`);
  const policy = page.headers.get("Content-Security-Policy")!;
  expect(policy).toContain("script-src 'self'");
  expect(policy).toContain("style-src 'self'");
  expect(policy).not.toContain("unsafe-inline");
  const html = await page.text();
  // What the page loads from beside it (a link in its <noscript> is not loaded).
  const assets = [...html.matchAll(new RegExp(`(?:src|href)="(${path}/[^"]+)"`, "g"))].map((match) => match[1]!);
  expect(assets.sort()).toEqual([`${path}/${name}.css`, `${path}/${name}.js`]);
  let compressed = gzipSync(html).byteLength;
  for (const asset of assets) {
    const response = await fetch(`${root}${asset}`);
    expect(response.status).toBe(200);
    compressed += gzipSync(Buffer.from(await response.arrayBuffer())).byteLength;
  }
  expect(compressed).toBeLessThan(150_000);
}
