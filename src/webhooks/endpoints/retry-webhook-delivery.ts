import { defineOperation } from "../../framework/operations/define-operation";
import { ApiError } from "../../framework/api-error";
import { callDependency } from "../../lib/dependency";
import { DeliveryParams, WebhookDelivery } from "./webhook-endpoint-schemas";
import { budgetEndpoint, deliveryAttempts, deliveryJson, disabledBecause, resetDelivery } from "./webhook-endpoint-store";
import { jsonBody } from "../../framework/counted-body";
import { budgetOfCaller, notFound, WEBHOOKS } from "./webhook-endpoint-operation";
import { auditedUnlessRefused } from "./endpoint-audit";

/** POST .../deliveries/{deliveryId}/retry: one delivery sent again, its schedule afresh. */
export const retryWebhookDelivery = defineOperation({
  ...WEBHOOKS,
  operationId: "retryWebhookDelivery",
  method: "post",
  path: "/webhook-endpoints/{endpointId}/deliveries/{deliveryId}/retry",
  summary: "Deliver an event again",
  description: "Sends the delivery's event again now, with the same webhook-id, and a fresh retry schedule; delivered or failed ones too. Audited, with the key that asked.",
  params: { schema: DeliveryParams, invalid: { code: "webhook_delivery_not_found", message: "No such delivery: ids are as the deliveries list gives them." } },
  responses: { 202: { description: "The delivery, due now", body: WebhookDelivery } },
  errors: ["webhook_endpoint_not_found", "webhook_delivery_not_found", "webhook_endpoint_disabled"],
  async handle(c, { endpointId, deliveryId }) {
    const db = c.env.DB;
    const endpoint = await callDependency("D1", () => budgetEndpoint(db, budgetOfCaller(c), endpointId));
    if (!endpoint) throw notFound(endpointId);
    if (endpoint.status === "disabled") {
      throw new ApiError("webhook_endpoint_disabled", `The endpoint is ${disabledBecause(endpoint)}: enable it first, then retry.`);
    }
    const row = await auditedUnlessRefused(c, { endpointId, operation: "retry", changes: { deliveryId } }, async () => {
      const reset = await callDependency("D1", () => resetDelivery(db, endpointId, deliveryId, new Date().toISOString()));
      return reset ?? new ApiError("webhook_delivery_not_found", `No delivery ${deliveryId} to endpoint ${endpointId}.`);
    });
    await callDependency("Queues", () => c.env.WEBHOOK_DELIVERIES.send({ deliveryId }, { contentType: "json" }));
    return jsonBody(c, deliveryJson(row, await callDependency("D1", () => deliveryAttempts(db, endpointId, [row.id]))), 202);
  },
});
