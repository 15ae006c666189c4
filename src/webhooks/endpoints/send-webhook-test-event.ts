import { defineOperation } from "../../framework/operations/define-operation";
import { ApiError } from "../../framework/api-error";
import { jsonBody } from "../../framework/counted-body";
import { callDependency } from "../../lib/call-dependency";
import { DELIVERY_TIMEOUT_MS } from "../../webhook-delivery/delivery-attempt";
import { postToReceiver } from "../../webhook-delivery/receiver-answer";
import { signersOf, webhookHeaders } from "../../webhook-delivery/webhook-signature";
import { liveSecrets, sealingKeyOf } from "../../webhook-delivery/webhook-secrets";
import { WebhookTestResult } from "./webhook-endpoint-schemas";
import { TEST_EVENTS_PER_WINDOW } from "../../account/webhook-test-event-quota";
import { disabledBecause } from "./endpoint-json";
import { servedLocally, webhookUrlProblem } from "./webhook-url";
import { accountOfCaller, ENDPOINT_PARAMS, notFound, WEBHOOKS } from "./webhook-endpoint-operation";
import { auditedUnlessRefused } from "./endpoint-audit";
import { accountEndpoint } from "../../webhook-delivery/endpoint-table";

/** POST /v2/webhook-endpoints/{endpointId}/test: a signed webhook.test event, sent now; what the receiver answered. */
export const sendWebhookTestEvent = defineOperation({
  ...WEBHOOKS,
  beyondItself: "webhook endpoints",
  operationId: "sendWebhookTestEvent",
  method: "post",
  path: "/webhook-endpoints/{endpointId}/test",
  summary: "Send a test event",
  description:
    "POSTs a webhook.test event to the endpoint now, signed as every delivery is (with both secrets during a " +
    "rotation's overlap), " +
    `and answers what the receiver did within ${DELIVERY_TIMEOUT_MS / 1000} s. Never retried, and never in the ` +
    `deliveries list: ` +
    `no order changed. The endpoint must be enabled. At most ${TEST_EVENTS_PER_WINDOW} a minute per account, across ` +
    `its endpoints (429 too_many_test_events, ` +
    "with Retry-After, beyond). Audited, with the key that asked.",
  params: ENDPOINT_PARAMS,
  responses: { 200: { description: "What the receiver answered", body: WebhookTestResult } },
  errors: [
    "webhook_endpoint_not_found",
    "webhook_endpoint_disabled",
    "too_many_test_events",
    "key_acts_only_on_itself",
  ],
  async handle(c, { endpointId }) {
    const endpoint = await callDependency("D1", () => accountEndpoint(c.env.DB, accountOfCaller(c), endpointId));
    if (!endpoint) throw notFound(endpointId);
    if (endpoint.status === "disabled") {
      throw new ApiError(
        "webhook_endpoint_disabled",
        `The endpoint is ${disabledBecause(endpoint)}: enable it first, then test it.`,
      );
    }
    const now = Date.now();
    const wait = await callDependency("rate limiter", () =>
      c.env.ACCOUNTS.getByName(accountOfCaller(c)).admitTestEvent(now),
    );
    if (wait !== null) {
      throw new ApiError(
        "too_many_test_events",
        `This key's account sent ${TEST_EVENTS_PER_WINDOW} test events in the last minute, across its endpoints: try ` +
          `again in ${Math.ceil(wait / 1000)} s.`,
        {
          "Retry-After": String(Math.ceil(wait / 1000)),
        },
      );
    }
    const secrets = await liveSecrets(sealingKeyOf(c.env), endpoint, now);
    if (!secrets) throw new Error("the endpoint's secret cannot be opened (WEBHOOK_SECRETS_KEY changed?)");
    const random = [...crypto.getRandomValues(new Uint8Array(16))];
    const id = `evt_test_${random.map((byte) => byte.toString(16).padStart(2, "0")).join("")}`;
    const body = JSON.stringify({ id, type: "webhook.test", createdAt: new Date(now).toISOString(), endpointId });
    const headers = await webhookHeaders(await signersOf(secrets), id, Math.floor(now / 1000), body);
    // The rules of today, not of when the URL was taken: a URL they now refuse is not called.
    const refused = webhookUrlProblem(endpoint.url, servedLocally(c.get("config").baseUrl));
    if (refused)
      return jsonBody(c, {
        id,
        delivered: false,
        status: null,
        durationMs: 0,
        response: null,
        error: `not sent: ${refused}`,
      });
    const { status, durationMs, response, error } = await auditedUnlessRefused(
      c,
      { endpointId, operation: "test", changes: { testEventId: id } },
      () => postToReceiver(fetch, endpoint.url, { headers, body }, DELIVERY_TIMEOUT_MS),
    );
    return jsonBody(c, {
      id,
      delivered: status !== null && status >= 200 && status < 300,
      status,
      durationMs,
      response,
      error,
    });
  },
});
