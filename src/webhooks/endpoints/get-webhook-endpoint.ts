import { defineOperation } from "../../framework/operations/define-operation";
import { callDependency } from "../../lib/call-dependency";
import { WebhookEndpoint } from "./webhook-endpoint-schemas";
import { endpointJson } from "./endpoint-json";
import { jsonBody } from "../../framework/counted-body";
import { accountOfCaller, notFound, WEBHOOKS, ENDPOINT_PARAMS } from "./webhook-endpoint-operation";
import { accountEndpoint } from "../../webhook-delivery/endpoint-table";

/** GET /v2/webhook-endpoints/{endpointId}. */
export const getWebhookEndpoint = defineOperation({
  ...WEBHOOKS,
  operationId: "getWebhookEndpoint",
  method: "get",
  path: "/webhook-endpoints/{endpointId}",
  summary: "Get one webhook endpoint",
  description: "One endpoint of the calling key's account; another account's is 404, as if it did not exist.",
  params: ENDPOINT_PARAMS,
  responses: { 200: { description: "The endpoint", body: WebhookEndpoint } },
  errors: ["webhook_endpoint_not_found"],
  async handle(c, { endpointId }) {
    const row = await callDependency("D1", () => accountEndpoint(c.env.DB, accountOfCaller(c), endpointId));
    if (!row) throw notFound(endpointId);
    return jsonBody(c, endpointJson(row));
  },
});
