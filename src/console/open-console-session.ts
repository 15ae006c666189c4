import { defineOperation } from "../framework/operations/define-operation";
import { ANY_KEY } from "../framework/operations/scopes";
import { ApiError } from "../framework/api-error";
import { jsonBody } from "../framework/counted-body";
import { keyOfCaller } from "../keys/caller";
import { CONSOLE, SignedIn } from "./console-session-schemas";
import { openConsoleSession } from "./console-sessions";
import { refuseSignInFromAnotherSite } from "../console-kit/origin-checks";

/** POST /v2/console/session: a key, presented once, exchanged for a session cookie. */
export const openConsoleSessionOperation = defineOperation({
  ...CONSOLE,
  scope: ANY_KEY,
  operationId: "openConsoleSession",
  method: "post",
  path: "/console/session",
  summary: "Sign in to the console with a key",
  description:
    "Exchanges the key in the Authorization header for a console session: an HttpOnly, SameSite=Strict cookie, " +
    "sealed, " +
    "for 12 hours at most, ending sooner at sign-out or when the key is revoked or expires. The cookie then stands " +
    "for the " +
    "key in every operation, with its scopes and limits. Refused from another site. Audited.",
  responses: { 201: { description: "Signed in: the cookie is set", body: SignedIn, headers: ["Set-Cookie"] } },
  errors: ["cross_site_request"],
  async handle(c) {
    refuseSignInFromAnotherSite(c.req.raw);
    if (c.get("caller").kind === "key" && c.req.header("Authorization") === undefined) {
      throw new ApiError(
        "missing_api_key",
        'Send the key to sign in with in the header "Authorization: Bearer <key>".',
      );
    }
    const { cookie, expiresAt } = await openConsoleSession(c, keyOfCaller(c), "key");
    return jsonBody(c, { expiresAt }, 201, { "Set-Cookie": cookie, "Cache-Control": "no-store" });
  },
});
