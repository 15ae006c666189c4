import type { WebhookDescription } from "../framework/documents/openapi-document";
import { OrderEvent } from "../events/order-event-schemas";
import { DELIVERY_TIMEOUT_MS } from "../webhook-delivery/delivery-attempt";
import { WebhookTestEvent } from "./endpoints/webhook-endpoint-schemas";

/** The Standard Webhooks headers every request to a receiver carries, for ids of the given pattern. */
const signedHeaders = (id: { description: string; pattern: string }): WebhookDescription["headers"] => [
  { name: "webhook-id", description: id.description, schema: { type: "string", pattern: id.pattern } },
  {
    name: "webhook-timestamp",
    description: "When this attempt was signed, Unix seconds: refuse one far from now",
    schema: { type: "string", pattern: "^[0-9]+$" },
  },
  {
    name: "webhook-signature",
    description:
      "v1, and the base64 HMAC-SHA256 of webhook-id.webhook-timestamp.body keyed with the secret's decoded bytes " +
      "(after whsec_); " +
      "during a secret's rotation one per secret, space-separated: accept it when any verifies",
    schema: { type: "string", pattern: "^v1,[A-Za-z0-9+/]+=*( v1,[A-Za-z0-9+/]+=*)*$" },
  },
];

/** The request every webhook endpoint receives, as v2's document describes it (docs/api.md#receiving-webhooks). */
export const orderEventWebhook: WebhookDescription = {
  name: "orderEvent",
  summary: "An order event, delivered to a webhook endpoint",
  description:
    "POSTed to each enabled endpoint whose types hold the event, signed as Standard Webhooks specifies. Verify the " +
    "signature over the raw body before acting, and deduplicate by webhook-id: delivery is at least once, in no " +
    "promised " +
    `order across events. An answer other than 2xx within ${DELIVERY_TIMEOUT_MS / 1000} s is retried on the retry ` +
    `schedule ` +
    "(about 3 days); an endpoint that fails for all of it is disabled.",
  body: OrderEvent,
  headers: signedHeaders({
    description: "The event's id (evt_ and its sequence number): the same on every attempt",
    pattern: "^evt_[1-9][0-9]*$",
  }),
  responses: { "2XX": "Received: the delivery is done", default: "Not received: the event is sent again later" },
};

/** The test event an endpoint's owner sends on demand (docs/api.md#webhook-endpoints). */
export const testEventWebhook: WebhookDescription = {
  name: "testEvent",
  summary: "A test event, sent when the endpoint's owner asks",
  description:
    "POSTed once, at once, when the endpoint's owner asks (sendWebhookTestEvent), signed as every delivery is. Its " +
    "type is " +
    "webhook.test and its id evt_test_…: no order changed, so a receiver answers it and acts on nothing. Never " +
    "retried.",
  body: WebhookTestEvent,
  headers: signedHeaders({
    description: "The test's id, evt_test_ and 32 hex digits",
    pattern: "^evt_test_[0-9a-f]{32}$",
  }),
  responses: { "2XX": "Received", default: "Not received: reported to whoever sent the test, nothing more" },
};
