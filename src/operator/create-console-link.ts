import { jsonBody } from "../framework/counted-body";
import { ApiError } from "../framework/api-error";
import { auditedKeyOperation } from "../keys/audit";
import { accountOf } from "../account/key-record";
import { isUsable } from "../account/key-record";
import { ConsoleLink, createConsoleLink, LINK_SECONDS } from "../console-kit/sign-in-links";
import { CONSOLE_PATH } from "../console-kit/console-page-html";
import { keyOperation } from "./key-operation";

/** POST /admin/keys/{keyId}/console-link: a single-use console sign-in link for 15 minutes. Audited. */
export const createConsoleLinkOperation = keyOperation(
  {
    operationId: "createConsoleLink",
    method: "post",
    action: "console-link",
    summary: "A single-use console sign-in link for a key",
    description:
      "A link to the console that signs in as the key once, within 15 minutes; its token is shown this once and kept " +
      "only as a digest. Audited.",
    body: ConsoleLink,
    status: 201,
    errors: ["not_found", "key_not_found"],
  },
  async (c, { record }) => {
    if (!isUsable(record))
      throw new ApiError("key_not_found", `Key ${record.id} is revoked or expired: no one can sign in with it.`);
    const operator = c.get("operatorActor") ?? "operator";
    const now = Date.now();
    const { token, expiresAt } = await auditedKeyOperation(
      c.env.DB,
      {
        operation: "console_link",
        keyId: record.id,
        changes: { expiresAt: new Date(now + LINK_SECONDS * 1000).toISOString(), budget: accountOf(record) },
        actor: operator,
      },
      () => createConsoleLink(c.env.DB, record.id, operator, now),
    );
    // At the public origin; the token in the fragment, which browsers never send.
    const url = `${new URL(c.get("config").baseUrl).origin}${CONSOLE_PATH}#link=${token}`;
    return jsonBody(c, { keyId: record.id, url, expiresAt }, 201, { "Cache-Control": "no-store" });
  },
);
