import { defineOperation } from "../../framework/operations/define-operation";
import { ApiError } from "../../framework/api-error";
import { callDependency } from "../../lib/call-dependency";
import { ATTEMPTS_SHOWN, DeliveryParams, WebhookDelivery } from "./webhook-endpoint-schemas";
import { disabledBecause } from "./endpoint-json";
import { laneOf, seqOfDeliveryId } from "../../webhook-delivery/lane-calls";
import { jsonBody } from "../../framework/counted-body";
import { accountOfCaller, notFound, WEBHOOKS } from "./webhook-endpoint-operation";
import { auditedUnlessRefused } from "./endpoint-audit";
import { accountEndpoint } from "../../webhook-delivery/endpoint-table";

/** POST .../deliveries/{deliveryId}/retry: one delivery sent again, its schedule afresh. */
export const retryWebhookDelivery = defineOperation({
  ...WEBHOOKS,
  beyondItself: "webhook endpoints",
  operationId: "retryWebhookDelivery",
  method: "post",
  path: "/webhook-endpoints/{endpointId}/deliveries/{deliveryId}/retry",
  summary: "Deliver an event again",
  description:
    "Sends the delivery's event again now, with the same webhook-id, and a fresh retry schedule; delivered or failed " +
    "ones too. Audited, with the key that asked.",
  params: {
    schema: DeliveryParams,
    invalid: {
      code: "webhook_delivery_not_found",
      message: "No such delivery: ids are as the deliveries list gives them.",
    },
  },
  responses: { 202: { description: "The delivery, due now", body: WebhookDelivery } },
  errors: [
    "webhook_endpoint_not_found",
    "webhook_delivery_not_found",
    "webhook_endpoint_disabled",
    "key_acts_only_on_itself",
  ],
  async handle(c, { endpointId, deliveryId }) {
    const endpoint = await callDependency("D1", () => accountEndpoint(c.env.DB, accountOfCaller(c), endpointId));
    if (!endpoint) throw notFound(endpointId);
    if (endpoint.status === "disabled") {
      throw new ApiError(
        "webhook_endpoint_disabled",
        `The endpoint is ${disabledBecause(endpoint)}: enable it first, then retry.`,
      );
    }
    const notThisEndpoints = new ApiError(
      "webhook_delivery_not_found",
      `No delivery ${deliveryId} to endpoint ${endpointId}.`,
    );
    // A delivery id names its endpoint: another endpoint's is none of this one's.
    if (!deliveryId.startsWith(`wd_${endpointId.slice("we_".length)}_`)) throw notThisEndpoints;
    const delivery = await auditedUnlessRefused(
      c,
      { endpointId, operation: "retry", changes: { deliveryId } },
      async () => {
        const reset = await callDependency("webhook lane", () =>
          laneOf(c.env, endpointId).retry(endpointId, seqOfDeliveryId(deliveryId), ATTEMPTS_SHOWN),
        );
        return reset ?? notThisEndpoints;
      },
    );
    return jsonBody(c, delivery, 202);
  },
});
