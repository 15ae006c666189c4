import { z } from "zod";
import { defineOperation } from "../../framework/operations/define-operation";
import { callDependency } from "../../lib/call-dependency";
import { jsonBody } from "../../framework/counted-body";
import { documentedParameters, strictQuery } from "../../framework/operations/strict-query";
import { OperatorEndpoint, operatorJson, OPERATOR } from "./operator-webhook-endpoint";
import { accountEndpoints, allEndpoints } from "../../webhook-delivery/endpoint-table";

const PARAMETERS = { budget: "an account: its endpoints alone" } as const;

/** The operator's view of every account's endpoints; a parameter it does not know is refused, never ignored. */
export const listAllWebhookEndpoints = defineOperation({
  ...OPERATOR,
  operationId: "listAllWebhookEndpoints",
  method: "get",
  path: "/webhook-endpoints",
  summary: "Every webhook endpoint, of every account",
  description: "With its account, its status and why it was disabled; `?budget=` for one account's. Never a secret.",
  queryParameters: documentedParameters(PARAMETERS, { budget: { type: "string" } }),
  responses: { 200: { description: "The endpoints", body: z.object({ data: z.array(OperatorEndpoint) }) } },
  errors: ["invalid_query"],
  async handle(c) {
    const account = strictQuery(new URL(c.req.url).searchParams, PARAMETERS).value("budget");
    const rows = await callDependency("D1", () =>
      account === undefined ? allEndpoints(c.env.DB) : accountEndpoints(c.env.DB, account),
    );
    return jsonBody(c, { data: rows.map(operatorJson) });
  },
});
