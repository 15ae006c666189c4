import { z } from "zod";
import { ApiError } from "../../framework/api-error";
import { jsonBody } from "../../framework/counted-body";
import { defineOperation } from "../../framework/operations/define-operation";
import { readJsonBody } from "../../framework/operations/read-json-body";
import { base64, urlSafe } from "../../lib/base64";
import { callDependency } from "../../lib/call-dependency";
import { sha256Hex } from "../../lib/digest";
import { INSERT_OPERATOR, OPERATOR_BY_NAME, OPERATOR_NAME, type OperatorRow } from "../operator-table";
import { NAMED_OPERATORS, NO_STORE } from "./named-operator";
import { actorNameTaken } from "../require-operator";

const AddOperator = z.strictObject({
  name: z.string().regex(OPERATOR_NAME).describe("Letters, digits and . _ @ + -, up to 64: a handle or an email"),
});

/** POST /admin/operators: a named operator with its own token, shown once, its SHA-256 kept; names are never reused. */
export const addOperator = defineOperation({
  ...NAMED_OPERATORS,
  operationId: "addOperator",
  method: "post",
  path: "/operators",
  summary: "Add a named operator",
  description:
    "A new operator and their token (so_op_…), shown this once; the service keeps its SHA-256. A name taken before, " +
    "revoked or not, or one audits give another (the OPERATOR_TOKEN's holder, github-secret-scanning, operator), is " +
    "409 operator_exists.",
  requestBody: { description: "The operator's name", schema: AddOperator },
  responses: {
    201: {
      description: "The operator's token, shown once",
      body: z.object({ name: z.string(), token: z.string().describe("Shown this once") }),
    },
  },
  errors: ["invalid_body", "operator_exists", "unsupported_media_type", "body_too_large"],
  async handle(c) {
    const { name } = await readJsonBody(c, AddOperator);
    if (actorNameTaken(c.env, name))
      throw new ApiError("operator_exists", `The name ${name} is taken: audits name another with it already.`);
    const db = c.env.DB;
    const existing = await callDependency("D1", () => db.prepare(OPERATOR_BY_NAME).bind(name).first<OperatorRow>());
    if (existing)
      throw new ApiError(
        "operator_exists",
        existing.revoked_at
          ? `An operator named ${name} was revoked at ${existing.revoked_at}; a name is never given twice.`
          : `An operator named ${name} exists.`,
      );
    const token = `so_op_${urlSafe(base64(crypto.getRandomValues(new Uint8Array(32))))}`;
    const actor = c.get("operatorActor") ?? "operator";
    const added = await callDependency("D1", async () =>
      db
        .prepare(INSERT_OPERATOR)
        .bind(name, await sha256Hex(token), new Date().toISOString(), actor)
        .first<string>("name"),
    );
    // Another add of the same name won the race between the read above and this insert.
    if (added === null) throw new ApiError("operator_exists", `An operator named ${name} exists.`);
    return jsonBody(c, { name, token }, 201, NO_STORE);
  },
});
