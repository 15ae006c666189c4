import { defineOperation } from "../framework/operations/define-operation";
import { ANY_KEY } from "../framework/operations/scopes";
import { keyOfCaller } from "../keys/caller";
import { CONSOLE } from "./console-session-schemas";
import { endConsoleSession } from "./console-sessions";
import { sessionCookie } from "../console-kit/session-cookie";

/** DELETE /v2/console/session: sign-out, everywhere at once; the cookie is cleared. */
export const endConsoleSessionOperation = defineOperation({
  ...CONSOLE,
  scope: ANY_KEY,
  operationId: "endConsoleSession",
  method: "delete",
  path: "/console/session",
  summary: "Sign out of the console",
  description:
    "Ends the console session the request came with, at once and everywhere (a copy of its cookie is refused from " +
    "then " +
    "on), and clears the cookie. A request with a key and no session has nothing to end. Audited.",
  responses: { 204: { description: "Signed out", headers: ["Set-Cookie"] } },
  errors: [],
  async handle(c) {
    const key = keyOfCaller(c);
    const caller = c.get("caller");
    const session = caller.kind === "key" ? caller.session : undefined;
    if (session) await endConsoleSession(c, key, session.id);
    return c.body(null, 204, { "Set-Cookie": sessionCookie(c.req.url, undefined), "Cache-Control": "no-store" });
  },
});
