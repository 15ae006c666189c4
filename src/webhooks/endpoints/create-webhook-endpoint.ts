import { defineOperation } from "../../framework/operations/define-operation";
import { readJsonBody } from "../../framework/operations/read-json-body";
import { ApiError } from "../../framework/api-error";
import { callDependency } from "../../lib/dependency";
import { ORDER_EVENT_TYPES } from "../../events/order-event-schemas";
import { CreatedWebhookEndpoint, CreateWebhookEndpoint } from "./webhook-endpoint-schemas";
import {
  insertEndpoint,
  lockedEndpoints,
  MAX_ENDPOINTS_PER_BUDGET,
  newEndpointId,
} from "../../webhook-delivery/endpoint-table";
import { endpointJson } from "./endpoint-json";
import { wakeDispatcher } from "../../webhook-delivery/dispatcher-calls";
import { newWebhookSecret, sealingKeyOf, sealSecret } from "../../webhook-delivery/webhook-secrets";
import { lockedHost, lockedUrl, lockRefusal } from "./endpoint-locks";
import { hostLock } from "../../webhook-delivery/host-lock-table";
import { normalWebhookUrl, webhookHost, servedLocally, webhookUrlProblem } from "./webhook-url";
import { jsonBody } from "../../framework/counted-body";
import { budgetOfCaller, requireEventScope, WEBHOOKS } from "./webhook-endpoint-operation";
import { auditedUnlessRefused } from "./endpoint-audit";
import { refuseRotatedAway } from "../../keys/own-keys/acting-key";

/** POST /v2/webhook-endpoints: a new endpoint of the caller's budget, its secret shown once. */
export const createWebhookEndpoint = defineOperation({
  ...WEBHOOKS,
  operationId: "createWebhookEndpoint",
  method: "post",
  path: "/webhook-endpoints",
  summary: "Add a webhook endpoint",
  description:
    `Order events (all types, or those named) are POSTed to the URL, signed as Standard Webhooks specifies, from ` +
    `the next event on. The answer holds the signing secret, shown this once. At most ${MAX_ENDPOINTS_PER_BUDGET} ` +
    "endpoints a budget (a key and the key it was rotated from share them). Audited, with the key that asked.",
  requestBody: {
    description: "The endpoint's URL and, optionally, the event types it wants",
    schema: CreateWebhookEndpoint,
  },
  responses: {
    201: { description: "The endpoint, with its secret", body: CreatedWebhookEndpoint, headers: ["Location"] },
  },
  errors: [
    "unsupported_media_type",
    "body_too_large",
    "invalid_body",
    "invalid_webhook_url",
    "too_many_webhook_endpoints",
    "webhook_endpoint_locked",
    "key_acts_only_on_itself",
  ],
  async handle(c) {
    requireEventScope(c);
    await refuseRotatedAway(c);
    const body = await readJsonBody(c, CreateWebhookEndpoint);
    const problem = webhookUrlProblem(body.url, servedLocally(c.get("config").baseUrl));
    if (problem) throw new ApiError("invalid_webhook_url", `${problem}.`);
    const url = normalWebhookUrl(body.url);
    const host = webhookHost(url)!;
    const budget = budgetOfCaller(c);
    if (await callDependency("D1", () => hostLock(c.env.DB, host))) throw lockedHost(host);
    // Stored URLs from before they were kept in one form are compared in it here; the insert's own check covers a lock
    // made meanwhile.
    const locked = await callDependency("D1", () => lockedEndpoints(c.env.DB, budget));
    const refusal = lockRefusal(locked, url);
    if (refusal) throw refusal;
    const id = newEndpointId();
    const secret = newWebhookSecret();
    const types = [...new Set(body.types ?? ORDER_EVENT_TYPES)].sort().join(",");
    const rateLimit = body.rateLimit ?? null;
    const row = {
      id,
      budget,
      url,
      types,
      rate_limit: rateLimit,
      created_at: new Date().toISOString(),
      secret_sealed: await sealSecret(sealingKeyOf(c.env), id, secret),
    };
    await auditedUnlessRefused(
      c,
      { endpointId: id, operation: "create", changes: { url, types, ...(rateLimit !== null && { rateLimit }) } },
      async () => {
        const inserted = await callDependency("D1", () => insertEndpoint(c.env.DB, row, host));
        if (inserted === "full") {
          return new ApiError(
            "too_many_webhook_endpoints",
            `This budget has ${MAX_ENDPOINTS_PER_BUDGET} webhook endpoints already: delete one first.`,
          );
        }
        if (inserted === "locked") return lockedUrl();
        if (inserted === "host_locked") return lockedHost(host);
        return inserted;
      },
    );
    wakeDispatcher(c);
    const location = new URL(`${c.req.path}/${id}`, c.req.url).href;
    return jsonBody(
      c,
      {
        ...endpointJson({
          ...row,
          status: "enabled",
          disabled_at: null,
          disabled_reason: null,
          disabled_by: null,
          disabled_note: null,
          previous_secret_sealed: null,
          previous_secret_until: null,
          url_changed_at: null,
          failing_since: null,
          last_delivered_at: null,
          disabled_for_leak: null,
        }),
        secret,
      },
      201,
      { Location: location },
    );
  },
});
