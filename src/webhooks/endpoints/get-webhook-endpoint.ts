import { defineOperation } from "../../framework/operations/define-operation";
import { callDependency } from "../../lib/call-dependency";
import { WebhookEndpoint } from "./webhook-endpoint-schemas";
import { budgetEndpoint } from "./endpoint-rows";
import { endpointJson } from "./endpoint-json";
import { jsonBody } from "../../framework/counted-body";
import { budgetOfCaller, notFound, WEBHOOKS, ENDPOINT_PARAMS } from "./webhook-endpoint-operation";

/** GET /v2/webhook-endpoints/{endpointId}. */
export const getWebhookEndpoint = defineOperation({
  ...WEBHOOKS,
  operationId: "getWebhookEndpoint",
  method: "get",
  path: "/webhook-endpoints/{endpointId}",
  summary: "Get one webhook endpoint",
  description: "One endpoint of the calling key's budget; another budget's is 404, as if it did not exist.",
  params: ENDPOINT_PARAMS,
  responses: { 200: { description: "The endpoint", body: WebhookEndpoint } },
  errors: ["webhook_endpoint_not_found"],
  async handle(c, { endpointId }) {
    const row = await callDependency("D1", () => budgetEndpoint(c.env.DB, budgetOfCaller(c), endpointId));
    if (!row) throw notFound(endpointId);
    return jsonBody(c, endpointJson(row));
  },
});
