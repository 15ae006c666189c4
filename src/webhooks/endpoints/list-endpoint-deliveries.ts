import { z } from "zod";
import { defineOperation } from "../../framework/operations/define-operation";
import { ApiError } from "../../framework/api-error";
import { callDependency } from "../../lib/call-dependency";
import { jsonBody } from "../../framework/counted-body";
import { laneOf } from "../../webhook-delivery/lane-calls";
import { ATTEMPTS_SHOWN, DELIVERIES_SHOWN, EndpointIdParams, WebhookDelivery } from "./webhook-endpoint-schemas";
import { OPERATOR } from "./operator-webhook-endpoint";
import { laneEndpoint } from "../../webhook-delivery/endpoint-table";

/**
 * GET /admin/webhook-endpoints/{endpointId}/deliveries: any account's endpoint's delivery log, as its owner reads it.
 */
export const listEndpointDeliveries = defineOperation({
  ...OPERATOR,
  operationId: "listEndpointDeliveries",
  method: "get",
  path: "/webhook-endpoints/{endpointId}/deliveries",
  summary: "An endpoint's delivery log",
  description:
    `Any account's endpoint's ${DELIVERIES_SHOWN} newest deliveries, as GET ` +
    `/v2/webhook-endpoints/{endpointId}/deliveries answers its owner: why an integrator's webhook fails.`,
  params: { schema: EndpointIdParams, invalid: { code: "not_found", message: "No such webhook endpoint." } },
  responses: { 200: { description: "The deliveries", body: z.object({ data: z.array(WebhookDelivery) }) } },
  errors: ["not_found"],
  async handle(c, { endpointId }) {
    const endpoint = await callDependency("D1", () => laneEndpoint(c.env.DB, endpointId));
    if (!endpoint) throw new ApiError("not_found", `No webhook endpoint ${endpointId}.`);
    const data = await callDependency("webhook lane", () =>
      laneOf(c.env, endpointId).deliveries(endpointId, DELIVERIES_SHOWN, ATTEMPTS_SHOWN, endpoint.ordering),
    );
    return jsonBody(c, { data }, 200, { "Cache-Control": "no-store" });
  },
});
