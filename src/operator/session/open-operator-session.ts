import { defineOperation } from "../../framework/operations/define-operation";
import { ApiError } from "../../framework/api-error";
import { jsonBody } from "../../framework/counted-body";
import { openOperatorSession, refuseOperatorSignIn } from "../operator-sessions";
import { OPERATOR_SESSION, OperatorSignedIn } from "./operator-session-schemas";

/** POST /admin/session: an operator's token, presented once, exchanged for an operators' console session. */
export const openOperatorSessionOperation = defineOperation({
  ...OPERATOR_SESSION,
  operator: true,
  operationId: "openOperatorSession",
  method: "post",
  path: "/session",
  summary: "Sign in to the operators' console with a token",
  description:
    "Exchanges the operator token in the Authorization header for a session of the operators' console: a sealed, " +
    "HttpOnly, SameSite=Strict cookie for 12 hours at most, ended sooner by sign-out or the operator's revocation. " +
    "Refused from another site. Behind Cloudflare Access there is nothing to open: Access signs operators in.",
  responses: { 201: { description: "Signed in: the cookie is set", body: OperatorSignedIn, headers: ["Set-Cookie"] } },
  errors: ["cross_site_request", "not_found"],
  async handle(c) {
    refuseOperatorSignIn(c);
    if (c.req.header("Authorization") === undefined)
      throw new ApiError("missing_api_key", "Send the operator token to sign in with as a bearer token.");
    const operator = c.get("operator")!;
    const { cookie, session } = await openOperatorSession(c, operator, "token", {
      bootstrap: c.get("bootstrapDigest"),
    });
    return jsonBody(c, { operator, via: "session", expiresAt: session.expiresAt }, 201, {
      "Set-Cookie": cookie,
      "Cache-Control": "no-store",
    });
  },
});
