/** What the API answers, as its v2 document says (the generated client's types). */
import type { components } from "../../client/src/schema-v2";

type Schemas = components["schemas"];
export type Session = Schemas["ConsoleSession"];
export type UsageHistory = Schemas["UsageHistory"];
export type OwnKey = Schemas["OwnKey"];
export type RotatedKey = Schemas["RotatedKey"];
export type WebhookEndpoint = Schemas["WebhookEndpoint"];
export type CreatedWebhookEndpoint = Schemas["CreatedWebhookEndpoint"];
export type WebhookDelivery = Schemas["WebhookDelivery"];
export type WebhookTestResult = Schemas["WebhookTestResult"];
export type RotatedWebhookSecret = Schemas["RotatedWebhookSecret"];
export type OrderEvent = Schemas["OrderEvent"];
export type OrderEventPage = Schemas["OrderEventPage"];

/** Every type of order event (the document's enum), for filters and forms. */
export const ORDER_EVENT_TYPES: OrderEvent["type"][] = [
  "order.created",
  "order.cancelled",
  "order.shipped",
  "order.delivered",
  "order.updated",
  "order.deleted",
];

/** The notices of another endpoint of the account failing (docs/api.md#failing-endpoints): never sent by default. */
export const ENDPOINT_NOTICE_TYPES: WebhookEndpoint["types"] = [
  "webhook_endpoint.failing",
  "webhook_endpoint.disabled",
];
