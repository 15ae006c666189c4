import type { Context } from "hono";
import { defineOperation } from "../framework/operations/define-operation";
import { readJsonBody } from "../framework/operations/read-json-body";
import { ApiError } from "../framework/api-error";
import type { AppEnv } from "../framework/app-env";
import { budgetOf } from "../keys/api-key-record";
import { callDependency } from "../lib/dependency";
import { ORDER_EVENT_TYPES } from "../events/order-event-schemas";
import { z } from "zod";
import { CreatedWebhookEndpoint, CreateWebhookEndpoint, DeliveryParams, DELIVERIES_SHOWN, EndpointIdParams, MAX_ENDPOINTS_PER_BUDGET, WebhookDelivery, WebhookEndpoint, WebhookEndpointList } from "./webhook-endpoint-schemas";
import { budgetEndpoint, budgetEndpoints, deleteEndpoint, deliveryJson, endpointDeliveries, endpointJson, insertEndpoint, newEndpointId, resetDelivery } from "./webhook-endpoint-store";
import { wakeDispatcher } from "./dispatcher-calls";
import { newWebhookSecret, sealingKeyOf, sealSecret } from "./webhook-secrets";
import { servedLocally, webhookUrlProblem } from "./webhook-url";
import { jsonBody } from "../framework/counted-body";

/** The calling key's budget: its endpoints are the budget's, so a rotated pair shares them. */
function budgetOfCaller(c: Context<AppEnv>): string {
  const caller = c.get("caller");
  if (caller.kind !== "key") throw new Error("a webhook operation ran without a key: its scope guard is missing");
  return budgetOf(caller.key);
}

const notFound = (id: string) => new ApiError("webhook_endpoint_not_found", `No webhook endpoint ${id} in this key's budget.`);

const WEBHOOKS = { scope: "webhooks:manage", tag: "Webhooks", stability: "beta" } as const;
const ENDPOINT_PARAMS = { schema: EndpointIdParams, invalid: { code: "webhook_endpoint_not_found", message: "No such webhook endpoint: ids look like we_ and 20 hex digits." } } as const;

/** The budget's webhook endpoints (docs/api.md#webhook-endpoints). */
export const webhookEndpointOperations = [
  defineOperation({
    ...WEBHOOKS,
    operationId: "createWebhookEndpoint",
    method: "post",
    path: "/webhook-endpoints",
    summary: "Add a webhook endpoint",
    description:
      `Order events (all types, or those named) are POSTed to the URL, signed as Standard Webhooks specifies, from ` +
      `the next event on. The answer holds the signing secret, shown this once. At most ${MAX_ENDPOINTS_PER_BUDGET} ` +
      "endpoints a budget (a key and the key it was rotated from share them).",
    requestBody: { description: "The endpoint's URL and, optionally, the event types it wants", schema: CreateWebhookEndpoint },
    responses: { 201: { description: "The endpoint, with its secret", body: CreatedWebhookEndpoint, headers: ["Location"] } },
    errors: ["unsupported_media_type", "body_too_large", "invalid_body", "invalid_webhook_url", "too_many_webhook_endpoints"],
    async handle(c) {
      const body = await readJsonBody(c, CreateWebhookEndpoint);
      const problem = webhookUrlProblem(body.url, servedLocally(c.get("config").baseUrl));
      if (problem) throw new ApiError("invalid_webhook_url", `${problem}.`);
      const budget = budgetOfCaller(c);
      const id = newEndpointId();
      const secret = newWebhookSecret();
      const types = [...new Set(body.types ?? ORDER_EVENT_TYPES)].sort().join(",");
      const row = { id, budget, url: body.url, types, created_at: new Date().toISOString(), secret_sealed: await sealSecret(sealingKeyOf(c.env), id, secret) };
      const inserted = await callDependency("D1", () => insertEndpoint(c.env.DB, row));
      if (!inserted) {
        throw new ApiError("too_many_webhook_endpoints", `This budget has ${MAX_ENDPOINTS_PER_BUDGET} webhook endpoints already: delete one first.`);
      }
      wakeDispatcher(c);
      const location = new URL(`${c.req.path}/${id}`, c.req.url).href;
      return jsonBody(c, { ...endpointJson({ ...row, status: "enabled", disabled_at: null, disabled_reason: null }), secret }, 201, { Location: location });
    },
  }),
  defineOperation({
    ...WEBHOOKS,
    operationId: "listWebhookEndpoints",
    method: "get",
    path: "/webhook-endpoints",
    summary: "List the budget's webhook endpoints",
    description: "Every endpoint of the calling key's budget, oldest first, enabled or disabled. Secrets are never shown again.",
    responses: { 200: { description: "The endpoints", body: WebhookEndpointList } },
    errors: [],
    async handle(c) {
      const rows = await callDependency("D1", () => budgetEndpoints(c.env.DB, budgetOfCaller(c)));
      return jsonBody(c, { data: rows.map(endpointJson) });
    },
  }),
  defineOperation({
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
  }),
  defineOperation({
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
  }),
  defineOperation({
    ...WEBHOOKS,
    operationId: "listWebhookDeliveries",
    method: "get",
    path: "/webhook-endpoints/{endpointId}/deliveries",
    summary: "List an endpoint's deliveries",
    description: `The endpoint's ${DELIVERIES_SHOWN} newest deliveries, newest event first: attempts, the last status, the next attempt, the outcome.`,
    params: ENDPOINT_PARAMS,
    responses: { 200: { description: "The deliveries", body: z.object({ data: z.array(WebhookDelivery) }).meta({ id: "WebhookDeliveryList" }) } },
    errors: ["webhook_endpoint_not_found"],
    async handle(c, { endpointId }) {
      const db = c.env.DB;
      if (!(await callDependency("D1", () => budgetEndpoint(db, budgetOfCaller(c), endpointId)))) throw notFound(endpointId);
      return jsonBody(c, { data: (await callDependency("D1", () => endpointDeliveries(db, endpointId, DELIVERIES_SHOWN))).map(deliveryJson) });
    },
  }),
  defineOperation({
    ...WEBHOOKS,
    operationId: "retryWebhookDelivery",
    method: "post",
    path: "/webhook-endpoints/{endpointId}/deliveries/{deliveryId}/retry",
    summary: "Deliver an event again",
    description: "Sends the delivery's event again now, with the same webhook-id, and a fresh retry schedule; delivered or failed ones too.",
    params: { schema: DeliveryParams, invalid: { code: "webhook_delivery_not_found", message: "No such delivery: ids are as the deliveries list gives them." } },
    responses: { 202: { description: "The delivery, due now", body: WebhookDelivery } },
    errors: ["webhook_endpoint_not_found", "webhook_delivery_not_found"],
    async handle(c, { endpointId, deliveryId }) {
      const db = c.env.DB;
      const endpoint = await callDependency("D1", () => budgetEndpoint(db, budgetOfCaller(c), endpointId));
      if (!endpoint) throw notFound(endpointId);
      const row = await callDependency("D1", () => resetDelivery(db, endpointId, deliveryId, new Date().toISOString()));
      if (!row) throw new ApiError("webhook_delivery_not_found", `No delivery ${deliveryId} to endpoint ${endpointId}.`);
      await callDependency("Queues", () => c.env.WEBHOOK_DELIVERIES.send({ deliveryId }, { contentType: "json" }));
      return jsonBody(c, deliveryJson(row), 202);
    },
  }),
];
