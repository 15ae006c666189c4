import { z } from "zod";
import { defineOperation } from "../../framework/operations/define-operation";
import { callDependency } from "../../lib/call-dependency";
import { jsonBody } from "../../framework/counted-body";
import { OperatorEndpoint, operatorJson, OPERATOR } from "./operator-webhook-endpoint";
import { accountEndpoints, allEndpoints } from "../../webhook-delivery/endpoint-table";

/** The operator's view of every account's endpoints. */
export const listAllWebhookEndpoints = defineOperation({
  ...OPERATOR,
  operationId: "listAllWebhookEndpoints",
  method: "get",
  path: "/webhook-endpoints",
  summary: "Every webhook endpoint, of every account",
  description: "With its account, its status and why it was disabled; `?budget=` for one account's. Never a secret.",
  responses: { 200: { description: "The endpoints", body: z.object({ data: z.array(OperatorEndpoint) }) } },
  errors: [],
  async handle(c) {
    const account = c.req.query("budget");
    const rows = await callDependency("D1", () =>
      account === undefined ? allEndpoints(c.env.DB) : accountEndpoints(c.env.DB, account),
    );
    return jsonBody(c, { data: rows.map(operatorJson) });
  },
});
