import { defineOperation } from "../../framework/operations/define-operation";
import { callDependency } from "../../lib/dependency";
import { deleteEndpoint } from "./webhook-endpoint-store";
import { budgetOfCaller, notFound, WEBHOOKS, ENDPOINT_PARAMS } from "./webhook-endpoint-operation";

/** DELETE /v2/webhook-endpoints/{endpointId}: the endpoint and its deliveries. */
export const deleteWebhookEndpoint = defineOperation({
  ...WEBHOOKS,
  operationId: "deleteWebhookEndpoint",
  method: "delete",
  path: "/webhook-endpoints/{endpointId}",
  summary: "Delete a webhook endpoint",
  description: "Nothing more is delivered to it, deliveries waiting for a retry included.",
  params: ENDPOINT_PARAMS,
  responses: { 204: { description: "Deleted" } },
  errors: ["webhook_endpoint_not_found"],
  async handle(c, { endpointId }) {
    if (!(await callDependency("D1", () => deleteEndpoint(c.env.DB, budgetOfCaller(c), endpointId)))) throw notFound(endpointId);
    return c.body(null, 204);
  },
});
