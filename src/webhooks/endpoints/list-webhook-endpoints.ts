import { defineOperation } from "../../framework/operations/define-operation";
import { callDependency } from "../../lib/call-dependency";
import { WebhookEndpointList } from "./webhook-endpoint-schemas";
import { endpointJson } from "./endpoint-json";
import { jsonBody } from "../../framework/counted-body";
import { accountOfCaller, WEBHOOKS } from "./webhook-endpoint-operation";
import { accountEndpoints } from "../../webhook-delivery/endpoint-table";

/** GET /v2/webhook-endpoints: the account's endpoints. */
export const listWebhookEndpoints = defineOperation({
  ...WEBHOOKS,
  operationId: "listWebhookEndpoints",
  method: "get",
  path: "/webhook-endpoints",
  summary: "List the account's webhook endpoints",
  description:
    "Every endpoint of the calling key's account, oldest first, enabled or disabled. Secrets are never shown again.",
  responses: { 200: { description: "The endpoints", body: WebhookEndpointList } },
  errors: [],
  async handle(c) {
    const rows = await callDependency("D1", () => accountEndpoints(c.env.DB, accountOfCaller(c)));
    return jsonBody(c, { data: rows.map(endpointJson) });
  },
});
