import { defineOperation } from "../../framework/operations/define-operation";
import { callDependency } from "../../lib/call-dependency";
import { z } from "zod";
import { ATTEMPTS_SHOWN, DELIVERIES_SHOWN, WebhookDelivery } from "./webhook-endpoint-schemas";
import { laneOf } from "../../webhook-delivery/lane-calls";
import { jsonBody } from "../../framework/counted-body";
import { accountOfCaller, notFound, WEBHOOKS, ENDPOINT_PARAMS } from "./webhook-endpoint-operation";
import { accountEndpoint } from "../../webhook-delivery/endpoint-table";

/** GET /v2/webhook-endpoints/{endpointId}/deliveries: its latest deliveries. */
export const listWebhookDeliveries = defineOperation({
  ...WEBHOOKS,
  operationId: "listWebhookDeliveries",
  method: "get",
  path: "/webhook-endpoints/{endpointId}/deliveries",
  summary: "List an endpoint's deliveries",
  description:
    `The endpoint's ${DELIVERIES_SHOWN} newest deliveries, newest first: attempts, the last status, ` +
    `the next attempt, the outcome, and each delivery's newest attempts (time, status, duration, the start of the ` +
    `answer).`,
  params: ENDPOINT_PARAMS,
  responses: {
    200: {
      description: "The deliveries",
      body: z.object({ data: z.array(WebhookDelivery) }).meta({ id: "WebhookDeliveryList" }),
    },
  },
  errors: ["webhook_endpoint_not_found"],
  async handle(c, { endpointId }) {
    const endpoint = await callDependency("D1", () => accountEndpoint(c.env.DB, accountOfCaller(c), endpointId));
    if (!endpoint) throw notFound(endpointId);
    const data = await callDependency("webhook lane", () =>
      laneOf(c.env, endpointId).deliveries(endpointId, DELIVERIES_SHOWN, ATTEMPTS_SHOWN, endpoint.ordering),
    );
    return jsonBody(c, { data });
  },
});
