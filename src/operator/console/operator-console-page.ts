import { defineOperation } from "../../framework/operations/define-operation";
import { ApiError } from "../../framework/api-error";
import { htmlBody } from "../../framework/counted-body";
import { CONTENT_SECURITY_POLICY, consolePage } from "../../console-kit/console-page-html";
import { operatorApiAvailable } from "../require-operator";
import { OPERATOR_CONSOLE_PATH } from "../operator-links";

const PAGE = consolePage(
  "Store Orders operators",
  OPERATOR_CONSOLE_PATH,
  "operator",
  "The operators' console needs JavaScript. Everything it does, the operator API does too: see docs/operations.md.",
);

/** `GET /operator`: the operators' page, where the operator API exists; it loads with no token. */
export const operatorConsolePageOperation = defineOperation({
  operationId: "getOperatorConsolePage",
  public: true,
  documented: false,
  method: "get",
  path: OPERATOR_CONSOLE_PATH,
  summary: "The operators' console",
  description: "The operators' web page: the pipeline, keys and accounts, webhooks, through the operator API.",
  tag: "Service",
  stability: "experimental",
  responses: { 200: { description: "The operators' console (HTML)" } },
  errors: ["not_found"],
  handle(c) {
    if (!operatorApiAvailable(c.env, c.get("config")))
      throw new ApiError("not_found", "No such resource. See GET / for what this service offers.");
    return htmlBody(c, PAGE, CONTENT_SECURITY_POLICY, { "Cache-Control": "no-cache" });
  },
});
