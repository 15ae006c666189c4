import { z } from "zod";
import { ApiError } from "../../framework/api-error";
import { jsonBody } from "../../framework/counted-body";
import { defineOperation } from "../../framework/operations/define-operation";
import { base64, urlSafe } from "../../lib/base64";
import { callDependency } from "../../lib/call-dependency";
import { sha256Hex } from "../../lib/digest";
import { INSERT_OPERATOR_LINK, OPERATOR_CONSOLE_PATH, OPERATOR_LINK_SECONDS } from "../operator-links";
import { presentsBootstrapToken } from "../require-operator";
import { NAMED_OPERATORS, NO_STORE, OperatorParams, operatorNameInvalid, operatorNamed } from "./named-operator";

/** POST /admin/operators/{name}/link: a single-use link into the operators' console, 15 minutes. */
export const createOperatorLink = defineOperation({
  ...NAMED_OPERATORS,
  operationId: "createOperatorLink",
  method: "post",
  path: "/operators/{name}/link",
  summary: "A single-use sign-in link to the operators' console",
  description:
    "For a live named operator, for 15 minutes; shown this once. An operator makes their own; the holder of the " +
    "OPERATOR_TOKEN secret anyone's. A revoked operator is 404 not_found.",
  params: { schema: OperatorParams, invalid: operatorNameInvalid },
  responses: {
    201: {
      description: "The link, shown once",
      body: z.object({ operator: z.string(), url: z.string(), expiresAt: z.string() }),
    },
  },
  errors: ["not_found"],
  async handle(c, { name }) {
    // Operators make their own links; only the bootstrap token's holder makes anyone's.
    if (name !== c.get("operator") && !(await presentsBootstrapToken(c)))
      throw new ApiError(
        "not_found",
        `Only ${name}, or the holder of the OPERATOR_TOKEN secret, makes ${name}'s link.`,
      );
    const operator = await operatorNamed(c, name);
    if (operator.revoked_at)
      throw new ApiError("not_found", `The operator ${name} was revoked at ${operator.revoked_at}: no link is made.`);
    const token = urlSafe(base64(crypto.getRandomValues(new Uint8Array(32))));
    const now = Date.now();
    const expiresAt = new Date(now + OPERATOR_LINK_SECONDS * 1000).toISOString();
    await callDependency("D1", async () =>
      c.env.DB.prepare(INSERT_OPERATOR_LINK)
        .bind(
          await sha256Hex(token),
          name,
          new Date(now).toISOString(),
          expiresAt,
          c.get("operatorActor") ?? "operator",
        )
        .run(),
    );
    const url = `${new URL(c.get("config").baseUrl).origin}${OPERATOR_CONSOLE_PATH}#link=${token}`;
    return jsonBody(c, { operator: name, url, expiresAt }, 201, NO_STORE);
  },
});
