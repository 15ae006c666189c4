import { defineOperation } from "../../framework/operations/define-operation";
import { endOperatorSession, operatorCookie } from "../operator-sessions";
import { OPERATOR_SESSION } from "./operator-session-schemas";

/** DELETE /admin/session: sign-out of the operators' console, everywhere at once; the cookie is cleared. */
export const endOperatorSessionOperation = defineOperation({
  ...OPERATOR_SESSION,
  operator: true,
  operationId: "endOperatorSession",
  method: "delete",
  path: "/session",
  summary: "Sign out of the operators' console",
  description:
    "Ends the session the request came with, at once and everywhere (a copy of its cookie is refused from then on), " +
    "and clears the cookie.",
  responses: { 204: { description: "Signed out", headers: ["Set-Cookie"] } },
  errors: [],
  async handle(c) {
    const session = c.get("operatorSession");
    if (session) await endOperatorSession(c.env.DB, session.id);
    return c.body(null, 204, { "Set-Cookie": operatorCookie(c.req.url, undefined), "Cache-Control": "no-store" });
  },
});
