import { defineOperation } from "../../framework/operations/define-operation";
import { readJsonBody } from "../../framework/operations/read-json-body";
import { ApiError } from "../../framework/api-error";
import { jsonBody } from "../../framework/counted-body";
import { callDependency } from "../../lib/call-dependency";
import { LIVE_OPERATOR_BY_NAME } from "../operator-table";
import { openOperatorSession, redeemOperatorLink, refuseOperatorSignIn } from "../operator-sessions";
import { OPERATOR_SESSION, OperatorSignedIn, RedeemOperatorLink } from "./operator-session-schemas";

const invalidLink = () =>
  new ApiError(
    "invalid_console_link",
    "This sign-in link was used already, has expired (links last 15 minutes), or never existed. Ask for a new one.",
  );

/** POST /admin/session/link: a link's token exchanged for the operator's session; public and limited per address. */
export const redeemOperatorLinkOperation = defineOperation({
  ...OPERATOR_SESSION,
  public: true,
  operationId: "redeemOperatorLink",
  method: "post",
  path: "/session/link",
  summary: "Sign in to the operators' console with a link",
  description:
    "Exchanges a single-use operator sign-in link's token (15 minutes) for a session of its operator, while that " +
    "operator is live. Refused from another site.",
  requestBody: { description: "The link's token", schema: RedeemOperatorLink },
  responses: { 201: { description: "Signed in: the cookie is set", body: OperatorSignedIn, headers: ["Set-Cookie"] } },
  errors: [
    "unsupported_media_type",
    "body_too_large",
    "invalid_body",
    "invalid_console_link",
    "cross_site_request",
    "not_found",
  ],
  async handle(c) {
    refuseOperatorSignIn(c);
    const { token } = await readJsonBody(c, RedeemOperatorLink);
    const redeemed = await redeemOperatorLink(c.env.DB, token);
    if (redeemed === undefined) throw invalidLink();
    const { operator, madeBy } = redeemed;
    const live = await callDependency("D1", () =>
      c.env.DB.withSession("first-primary").prepare(LIVE_OPERATOR_BY_NAME).bind(operator).first(),
    );
    if (!live) throw invalidLink();
    const linkedBy = madeBy === operator ? undefined : madeBy;
    const { cookie, session } = await openOperatorSession(c, operator, "link", { linkedBy });
    return jsonBody(c, { operator, via: "session", expiresAt: session.expiresAt }, 201, {
      "Set-Cookie": cookie,
      "Cache-Control": "no-store",
    });
  },
});
