import { chromium, type Browser, type Page } from "playwright-core";

/** Debian's chromium (installed by .ci/run), never one a tool downloads: headless, no sandbox, nothing fetched in the background. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run"],
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
    if (message.type() === "error" || message.type() === "warning") watched.errors.push(`${message.type()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => watched.errors.push(`page error: ${error.message}`));
  return watched;
}
