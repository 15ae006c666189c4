import type { WebhookDescription } from "../framework/documents/openapi-document";
import { OrderEvent } from "../events/order-event-schemas";
import { DELIVERY_TIMEOUT_MS } from "../webhook-delivery/delivery-attempt";
import { EndpointNotice, WebhookTestEvent } from "./endpoints/webhook-endpoint-schemas";

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
      "An hmac endpoint's: v1, and the base64 HMAC-SHA256 of webhook-id.webhook-timestamp.body keyed with the " +
      "secret's decoded bytes (after whsec_). An ed25519 endpoint's: v1a, and the base64 Ed25519 signature of the " +
      "same, verified with its publicKey. During a rotation one per secret or key, space-separated: accept it when " +
      "any verifies",
    schema: { type: "string", pattern: "^v1a?,[A-Za-z0-9+/]+=*( v1a?,[A-Za-z0-9+/]+=*)*$" },
  },
];

/** The request every webhook endpoint receives, as v2's document describes it (docs/api.md#receiving-webhooks). */
export const orderEventWebhook: WebhookDescription = {
  name: "orderEvent",
  summary: "An order event, delivered to a webhook endpoint",
  description:
    "POSTed to each enabled endpoint whose types hold the event, signed as Standard Webhooks specifies. Verify the " +
    "signature over the raw body before acting, and deduplicate by webhook-id: delivery is at least once, in event " +
    "order to a fifo endpoint, in no promised order otherwise. An answer other than 2xx within " +
    `${DELIVERY_TIMEOUT_MS / 1000} s is retried on the retry schedule (about 3 days); an endpoint whose every ` +
    "attempt fails for 5 days is disabled, its owner told by the notices (endpointNotice).",
  body: OrderEvent,
  headers: signedHeaders({
    description: "The event's id (evt_ and its sequence number): the same on every attempt",
    pattern: "^evt_[1-9][0-9]*$",
  }),
  responses: { "2XX": "Received: the delivery is done", default: "Not received: the event is sent again later" },
};

/** A notice of another endpoint failing (docs/api.md#failing-endpoints). */
export const endpointNoticeWebhook: WebhookDescription = {
  name: "endpointNotice",
  summary: "Another endpoint of the account is failing, or was disabled",
  description:
    "POSTed to each of the account's other enabled endpoints whose types name it (never by default), signed and " +
    "retried as an order event is: webhook_endpoint.failing once every attempt to an endpoint has failed for " +
    "WEBHOOK_FAILING_AFTER, webhook_endpoint.disabled when it has for WEBHOOK_DISABLE_AFTER and the service " +
    "disabled it. Once each a failing period; an endpoint enabled again starts a new one.",
  body: EndpointNotice,
  headers: signedHeaders({
    description: "The notice's id (ntc_ and a number of its own): the same on every attempt",
    pattern: "^ntc_[1-9][0-9]*$",
  }),
  responses: { "2XX": "Received: the delivery is done", default: "Not received: the notice is sent again later" },
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
