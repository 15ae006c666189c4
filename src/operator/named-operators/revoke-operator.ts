import { jsonBody } from "../../framework/counted-body";
import { defineOperation } from "../../framework/operations/define-operation";
import { callDependency } from "../../lib/call-dependency";
import { REVOKE_OPERATOR } from "../operator-table";
import {
  NAMED_OPERATORS,
  NamedOperator,
  namedOperatorOf,
  OperatorParams,
  operatorNameInvalid,
  operatorNamed,
} from "./named-operator";

/** POST /admin/operators/{name}/revoke: the operator's token and sessions refused from the next request. */
export const revokeOperator = defineOperation({
  ...NAMED_OPERATORS,
  operationId: "revokeOperator",
  method: "post",
  path: "/operators/{name}/revoke",
  summary: "Revoke a named operator",
  description: "Their token and sessions are refused from the next request on; revoking again changes nothing.",
  params: { schema: OperatorParams, invalid: operatorNameInvalid },
  responses: { 200: { description: "The operator, revoked", body: NamedOperator } },
  errors: ["not_found"],
  async handle(c, { name }) {
    const before = await operatorNamed(c, name);
    if (!before.revoked_at)
      await callDependency("D1", () =>
        c.env.DB.prepare(REVOKE_OPERATOR)
          .bind(name, new Date().toISOString(), c.get("operatorActor") ?? "operator")
          .run(),
      );
    return jsonBody(c, namedOperatorOf(await operatorNamed(c, name)));
  },
});
