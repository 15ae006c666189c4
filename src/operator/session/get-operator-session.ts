import { defineOperation } from "../../framework/operations/define-operation";
import { jsonBody } from "../../framework/counted-body";
import { OPERATOR_SESSION, OperatorSignedIn } from "./operator-session-schemas";

/** GET /admin/session: who the operators' console is signed in as, and how. */
export const getOperatorSession = defineOperation({
  ...OPERATOR_SESSION,
  operator: true,
  operationId: "getOperatorSession",
  method: "get",
  path: "/session",
  summary: "The signed-in operator",
  description:
    "The operator the request stands for, and how they signed in: a console session (with its end), a token, or " +
    "Cloudflare Access.",
  responses: { 200: { description: "The operator", body: OperatorSignedIn } },
  errors: [],
  handle(c) {
    const session = c.get("operatorSession");
    const via = c.get("config").access ? "access" : session ? "session" : "token";
    return jsonBody(c, { operator: c.get("operator")!, via, expiresAt: session?.expiresAt ?? null }, 200, {
      "Cache-Control": "no-store",
    });
  },
});
