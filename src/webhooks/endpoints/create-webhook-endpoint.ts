import { keyOfCaller } from "../../keys/caller";
import { defineOperation } from "../../framework/operations/define-operation";
import { readJsonBody } from "../../framework/operations/read-json-body";
import { WEBHOOK_READER_SCOPE } from "../../account/key-rules";
import { ApiError } from "../../framework/api-error";
import { callDependency } from "../../lib/call-dependency";
import { ORDER_EVENT_TYPES } from "../../events/order-event-schemas";
import { CreatedWebhookEndpoint, CreateWebhookEndpoint } from "./webhook-endpoint-schemas";
import { endpointJson } from "./endpoint-json";
import { wakeDispatcher } from "../../webhook-delivery/dispatcher-calls";
import { newSigningKeyPair, newWebhookSecret, sealingKeyOf, sealSecret } from "../../webhook-delivery/webhook-secrets";
import { lockedHost, lockedUrl } from "./endpoint-locks";
import { normalWebhookUrl, webhookHost, servedLocally, webhookUrlProblem } from "./webhook-url";
import { jsonBody } from "../../framework/counted-body";
import { accountOfCaller, WEBHOOKS } from "./webhook-endpoint-operation";
import { auditedUnlessRefused } from "./endpoint-audit";
import { hostLock } from "../../webhook-delivery/host-lock-table";
import { MAX_ENDPOINTS_PER_ACCOUNT, insertEndpoint } from "../../webhook-delivery/endpoint-table";

export const newEndpointId = () =>
  `we_${[...crypto.getRandomValues(new Uint8Array(10))].map((byte) => byte.toString(16).padStart(2, "0")).join("")}`;

/** POST /v2/webhook-endpoints: a new endpoint of the caller's account, its secret shown once. */
export const createWebhookEndpoint = defineOperation({
  ...WEBHOOKS,
  beyondItself: "webhook endpoints",
  alsoScope: WEBHOOK_READER_SCOPE,
  operationId: "createWebhookEndpoint",
  method: "post",
  path: "/webhook-endpoints",
  summary: "Add a webhook endpoint",
  description:
    `Order events (all types, or those named) are POSTed to the URL, signed as Standard Webhooks specifies, from ` +
    `the next event on. The answer holds the signing secret, shown this once. At most ${MAX_ENDPOINTS_PER_ACCOUNT} ` +
    "endpoints an account (a key and the key it was rotated from share them). Audited, with the key that asked.",
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
    const body = await readJsonBody(c, CreateWebhookEndpoint);
    const problem = webhookUrlProblem(body.url, servedLocally(c.get("config").baseUrl));
    if (problem) throw new ApiError("invalid_webhook_url", `${problem}.`);
    const url = normalWebhookUrl(body.url);
    const host = webhookHost(url)!;
    const account = accountOfCaller(c);
    if (await callDependency("D1", () => hostLock(c.env.DB, host))) throw lockedHost(host);
    const id = newEndpointId();
    // An ed25519 endpoint's signing key is sealed where a secret would be, never shown: its owner gets the public key.
    const pair = body.signing === "ed25519" ? await newSigningKeyPair() : undefined;
    const secret = pair?.signingKey ?? newWebhookSecret();
    const types = [...new Set(body.types ?? ORDER_EVENT_TYPES)].sort().join(",");
    const rateLimit = body.rateLimit ?? null;
    const row = {
      id,
      budget: account,
      url,
      types,
      rate_limit: rateLimit,
      created_at: new Date().toISOString(),
      secret_sealed: await sealSecret(sealingKeyOf(c.env), id, secret),
      public_key: pair?.publicKey ?? null,
      ordering: body.ordering ?? "concurrent",
    };
    await auditedUnlessRefused(
      c,
      {
        endpointId: id,
        operation: "create",
        changes: {
          url,
          types,
          ...(rateLimit !== null && { rateLimit }),
          ...(body.ordering === "fifo" && { ordering: "fifo" }),
        },
      },
      async () => {
        const inserted = await callDependency("D1", () => insertEndpoint(c.env.DB, row, host, keyOfCaller(c).id));
        if (inserted === "full") {
          return new ApiError(
            "too_many_webhook_endpoints",
            `This account has ${MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints already: delete one first.`,
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
        ...(pair === undefined && { secret }),
      },
      201,
      { Location: location },
    );
  },
});
