import { defineOperation } from "../framework/operations/define-operation";
import { htmlBody } from "../framework/counted-body";

/**
 * Where the console lives; its script and styles are static assets beside it (scripts/build-assets.ts bundles them).
 */
export const CONSOLE_PATH = "/console";

/**
 * Only this origin, and no inline script or style at all: the page is one
 * bundled script and one stylesheet, and the chart sets its sizes through
 * the CSSOM, which a policy does not govern.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * A console's page: its one stylesheet and one script, served beside it under `path` as `<name>.css` and `<name>.js`.
 */
export const consolePage = (title: string, path: string, name: string, noscript: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${path}/${name}.css">
<script type="module" src="${path}/${name}.js"></script>
</head>
<body>
<main id="console" aria-live="polite"><noscript>${noscript}</noscript></main>
</body>
</html>
`;

const PAGE = consolePage(
  "Store Orders console",
  CONSOLE_PATH,
  "console",
  'The console needs JavaScript. Everything it does, the API does too: see <a href="/v2/docs">the v2 reference</a>.',
);

/**
 * `GET /console`: the callers' web page (docs/api.md#the-console). It needs no
 * key to load (it asks for one, or a link's token); like every call without
 * one, it is limited per address. Not an operation of the API.
 */
export const consolePageOperation = defineOperation({
  operationId: "getConsolePage",
  public: true,
  documented: false,
  method: "get",
  path: CONSOLE_PATH,
  summary: "The console",
  description: "The callers' web page: usage, keys, webhooks and the event feed, through this API.",
  tag: "Service",
  stability: "beta",
  responses: { 200: { description: "The console (HTML)" } },
  errors: [],
  handle(c) {
    return htmlBody(c, PAGE, CONTENT_SECURITY_POLICY, { "Cache-Control": "no-cache" });
  },
});
