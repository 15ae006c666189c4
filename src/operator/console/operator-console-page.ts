import { defineOperation } from "../../framework/operations/define-operation";
import { ApiError } from "../../framework/api-error";
import { htmlBody } from "../../framework/counted-body";
import { CONTENT_SECURITY_POLICY } from "../../console/console-page";
import { operatorApiAvailable } from "../require-operator";
import { OPERATOR_CONSOLE_PATH } from "../operator-links";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Store Orders operators</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${OPERATOR_CONSOLE_PATH}/operator.css">
<script type="module" src="${OPERATOR_CONSOLE_PATH}/operator.js"></script>
</head>
<body>
<main id="console" aria-live="polite"><noscript>The operators' console needs JavaScript. Everything it does, the operator API does too: see docs/operations.md.</noscript></main>
</body>
</html>
`;

/**
 * `GET /operator`: the operators' web page (docs/operations.md#the-operators-console),
 * a client of the operator API. It exists where the operator API does (404
 * elsewhere); it needs no token to load (it asks for one, or a link's token).
 */
export const operatorConsolePageOperation = defineOperation({
  operationId: "getOperatorConsolePage",
  public: true,
  documented: false,
  method: "get",
  path: OPERATOR_CONSOLE_PATH,
  summary: "The operators' console",
  description: "The operators' web page: the pipeline, keys and budgets, webhooks, through the operator API.",
  tag: "Service",
  stability: "experimental",
  responses: { 200: { description: "The operators' console (HTML)" } },
  errors: ["not_found"],
  handle(c) {
    if (!operatorApiAvailable(c.env, c.get("config"))) throw new ApiError("not_found", "No such resource. See GET / for what this service offers.");
    return htmlBody(c, PAGE, CONTENT_SECURITY_POLICY, { "Cache-Control": "no-cache" });
  },
});
