import { defineOperation } from "../framework/operations/define-operation";
import { readJsonBody } from "../framework/operations/read-json-body";
import { ApiError } from "../framework/api-error";
import { jsonBody } from "../framework/counted-body";
import { CHALLENGE } from "../keys/caller";
import { isUsable } from "../account/key-record";
import { findKeyById } from "../keys/lookup";
import { CONSOLE, RedeemConsoleLink, SignedIn } from "./console-session-schemas";
import { LINK_TOKEN, redeemConsoleLink } from "../console-kit/sign-in-links";
import { openConsoleSession } from "./console-sessions";
import { refuseSignInFromAnotherSite } from "../console-kit/origin-checks";

const invalidLink = () =>
  new ApiError(
    "invalid_console_link",
    "This sign-in link was used already, has expired (links last 15 minutes), or never existed. Ask for a new one.",
    {
      "WWW-Authenticate": CHALLENGE,
    },
  );

/** POST /v2/console/session/link: a link's token exchanged for its key's session; limited per address. */
export const redeemConsoleLinkOperation = defineOperation({
  ...CONSOLE,
  public: true,
  operationId: "redeemConsoleLink",
  method: "post",
  path: "/console/session/link",
  summary: "Sign in to the console with an operator's link",
  description:
    "Exchanges the token of a single-use sign-in link an operator made (15 minutes) for a console session of the key " +
    "it " +
    "names, as signing in with the key does. A link works once: a used, expired or unknown one is 401 " +
    "invalid_console_link. " +
    "Refused from another site. Audited.",
  requestBody: { description: "The link's token", schema: RedeemConsoleLink },
  responses: { 201: { description: "Signed in: the cookie is set", body: SignedIn, headers: ["Set-Cookie"] } },
  errors: ["unsupported_media_type", "body_too_large", "invalid_body", "invalid_console_link", "cross_site_request"],
  async handle(c) {
    refuseSignInFromAnotherSite(c.req.raw);
    const { token } = await readJsonBody(c, RedeemConsoleLink);
    // A token that cannot be one costs no database write.
    if (!LINK_TOKEN.test(token)) throw invalidLink();
    const link = await redeemConsoleLink(c.env.DB, token);
    if (!link) throw invalidLink();
    const key = await findKeyById(c.env, link.keyId);
    if (!key || !isUsable(key)) throw invalidLink();
    const { cookie, expiresAt } = await openConsoleSession(c, key, "link", { linkBy: link.createdBy });
    return jsonBody(c, { expiresAt }, 201, { "Set-Cookie": cookie, "Cache-Control": "no-store" });
  },
});
