import { defineOperation } from "../../framework/operations/define-operation";
import { callDependency } from "../../lib/call-dependency";
import { WebhookEndpointList } from "./webhook-endpoint-schemas";
import { budgetEndpoints } from "./endpoint-rows";
import { endpointJson } from "./endpoint-json";
import { jsonBody } from "../../framework/counted-body";
import { budgetOfCaller, WEBHOOKS } from "./webhook-endpoint-operation";

/** GET /v2/webhook-endpoints: the budget's endpoints. */
export const listWebhookEndpoints = defineOperation({
  ...WEBHOOKS,
  operationId: "listWebhookEndpoints",
  method: "get",
  path: "/webhook-endpoints",
  summary: "List the budget's webhook endpoints",
  description:
    "Every endpoint of the calling key's budget, oldest first, enabled or disabled. Secrets are never shown again.",
  responses: { 200: { description: "The endpoints", body: WebhookEndpointList } },
  errors: [],
  async handle(c) {
    const rows = await callDependency("D1", () => budgetEndpoints(c.env.DB, budgetOfCaller(c)));
    return jsonBody(c, { data: rows.map(endpointJson) });
  },
});
