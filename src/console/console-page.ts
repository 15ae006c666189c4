import { defineOperation } from "../framework/operations/define-operation";
import { htmlBody } from "../framework/counted-body";

import { CONSOLE_PATH, CONTENT_SECURITY_POLICY, consolePage } from "../console-kit/console-page-html";

const PAGE = consolePage(
  "Store Orders console",
  CONSOLE_PATH,
  "console",
  'The console needs JavaScript. Everything it does, the API does too: see <a href="/v2/docs">the v2 reference</a>.',
);

/** `GET /console`: the callers' page (docs/api.md#the-console); it loads with no key, limited per address. */
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
