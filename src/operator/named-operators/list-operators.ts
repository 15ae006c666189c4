import { z } from "zod";
import { jsonBody } from "../../framework/counted-body";
import { defineOperation } from "../../framework/operations/define-operation";
import { callDependency } from "../../lib/call-dependency";
import { LIST_OPERATORS, type OperatorRow } from "../operator-table";
import { NAMED_OPERATORS, NamedOperator, namedOperatorOf } from "./named-operator";

/** GET /admin/operators (`npm run keys -- operator list`): every named operator, revoked ones too. */
export const listOperators = defineOperation({
  ...NAMED_OPERATORS,
  operationId: "listOperators",
  method: "get",
  path: "/operators",
  summary: "The named operators",
  description: "Every named operator by name, revoked ones too (a name is never given twice); never a token.",
  responses: { 200: { description: "The operators", body: z.object({ data: z.array(NamedOperator) }) } },
  errors: [],
  async handle(c) {
    const { results } = await callDependency("D1", () => c.env.DB.prepare(LIST_OPERATORS).all<OperatorRow>());
    return jsonBody(c, { data: results.map(namedOperatorOf) });
  },
});
