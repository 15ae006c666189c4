import { defineOperation } from "../../framework/operations/define-operation";
import { callDependency } from "../../lib/dependency";
import { z } from "zod";
import { DELIVERIES_SHOWN, WebhookDelivery } from "./webhook-endpoint-schemas";
import { budgetEndpoint, deliveryAttempts, deliveryJson, endpointDeliveries } from "./webhook-endpoint-store";
import { jsonBody } from "../../framework/counted-body";
import { budgetOfCaller, notFound, WEBHOOKS, ENDPOINT_PARAMS } from "./webhook-endpoint-operation";

/** GET /v2/webhook-endpoints/{endpointId}/deliveries: its latest deliveries. */
export const listWebhookDeliveries = defineOperation({
  ...WEBHOOKS,
  operationId: "listWebhookDeliveries",
  method: "get",
  path: "/webhook-endpoints/{endpointId}/deliveries",
  summary: "List an endpoint's deliveries",
  description: `The endpoint's ${DELIVERIES_SHOWN} newest deliveries, newest event first: attempts, the last status, the next attempt, the outcome, and each delivery's newest attempts (time, status, duration, the start of the answer).`,
  params: ENDPOINT_PARAMS,
  responses: { 200: { description: "The deliveries", body: z.object({ data: z.array(WebhookDelivery) }).meta({ id: "WebhookDeliveryList" }) } },
  errors: ["webhook_endpoint_not_found"],
  async handle(c, { endpointId }) {
    const db = c.env.DB;
    if (!(await callDependency("D1", () => budgetEndpoint(db, budgetOfCaller(c), endpointId)))) throw notFound(endpointId);
    const rows = await callDependency("D1", () => endpointDeliveries(db, endpointId, DELIVERIES_SHOWN));
    const attempts = await callDependency("D1", () => deliveryAttempts(db, endpointId, rows.map((row) => row.id)));
    return jsonBody(c, { data: rows.map((row) => deliveryJson(row, attempts)) });
  },
});
