import { defineOperation } from "../../framework/operations/define-operation";
import { readJsonBody } from "../../framework/operations/read-json-body";
import { WEBHOOK_READER_SCOPE } from "../../account/key-rules";
import { ApiError } from "../../framework/api-error";
import { jsonBody } from "../../framework/counted-body";
import { callDependency } from "../../lib/call-dependency";
import { wakeDispatcher } from "../../webhook-delivery/dispatcher-calls";
import { auditedUnlessRefused } from "./endpoint-audit";
import { UpdateWebhookEndpoint, WebhookEndpoint } from "./webhook-endpoint-schemas";
import { keyOfCaller } from "../../keys/caller";
import { endpointJson } from "./endpoint-json";
import { lockedEndpoint, lockedHost, lockedUrl, lockRefusal } from "./endpoint-locks";
import { hostLock } from "../../webhook-delivery/host-lock-table";
import { normalWebhookUrl, servedLocally, webhookHost, webhookUrlProblem } from "./webhook-url";
import { accountOfCaller, ENDPOINT_PARAMS, notFound, WEBHOOKS } from "./webhook-endpoint-operation";
import { lockedEndpoints, updateEndpoint } from "../../webhook-delivery/endpoint-table";

/** Enabling an endpoint a leaked key made or changed, refused until its owner names the URL it will deliver to. */
const unconfirmed = (url: string) =>
  new ApiError(
    "webhook_url_unconfirmed",
    `The endpoint was disabled because a leaked key made or changed it: it would deliver your orders to ` +
      `${url}. Check ` +
      `` +
      `` +
      `that URL is yours, then send "status": "enabled" with "confirmUrl": "${url}".`,
  );

/** PATCH /v2/webhook-endpoints/{endpointId}: its URL, its types, enabled or disabled; audited. */
export const updateWebhookEndpoint = defineOperation({
  ...WEBHOOKS,
  beyondItself: "webhook endpoints",
  alsoScope: WEBHOOK_READER_SCOPE,
  operationId: "updateWebhookEndpoint",
  method: "patch",
  path: "/webhook-endpoints/{endpointId}",
  summary: "Change a webhook endpoint",
  description:
    "Changes what is sent: the URL (checked as a new endpoint's), the event types, or the status. Disabled, nothing " +
    "is delivered; " +
    "enabled again, deliveries resume with the next event (the service's own disabling after failures included; an " +
    "operator's is " +
    "lifted only by an operator; one disabled for a leaked key needs confirmUrl). A key rotated away may not change " +
    "endpoints " +
    "(403 key_acts_only_on_itself). Audited with the key that asked.",
  params: ENDPOINT_PARAMS,
  requestBody: { description: "What to change: any of url, types and status", schema: UpdateWebhookEndpoint },
  responses: { 200: { description: "The endpoint as it is now", body: WebhookEndpoint } },
  errors: [
    "unsupported_media_type",
    "body_too_large",
    "invalid_body",
    "invalid_webhook_url",
    "webhook_endpoint_not_found",
    "webhook_endpoint_locked",
    "webhook_url_unconfirmed",
    "key_acts_only_on_itself",
  ],
  async handle(c, { endpointId }) {
    const body = await readJsonBody(c, UpdateWebhookEndpoint);
    let url: string | undefined;
    if (body.url !== undefined) {
      const problem = webhookUrlProblem(body.url, servedLocally(c.get("config").baseUrl));
      if (problem) throw new ApiError("invalid_webhook_url", `${problem}.`);
      url = normalWebhookUrl(body.url);
      const host = webhookHost(url)!;
      if (await callDependency("D1", () => hostLock(c.env.DB, host))) throw lockedHost(host);
      const locked = await callDependency("D1", () => lockedEndpoints(c.env.DB, accountOfCaller(c)));
      const refusal = lockRefusal(locked, url, endpointId);
      if (refusal) throw refusal;
    }
    const { confirmUrl, ...asked } = body;
    const confirmed = confirmUrl === undefined ? undefined : normalWebhookUrl(confirmUrl);
    // The URL to confirm is the one it will deliver to, checked in the update itself.
    const changes = {
      url,
      status: body.status,
      types: body.types && [...new Set(body.types)].sort().join(","),
      rateLimit: body.rateLimit,
      ordering: body.ordering,
      ...(confirmed !== undefined && { confirmedUrl: confirmed }),
      ...(url !== undefined && { host: webhookHost(url)! }),
      keyId: keyOfCaller(c).id,
    };
    const updated = await auditedUnlessRefused(
      c,
      { endpointId, operation: "update", changes: { ...asked, ...(url !== undefined && { url }) } },
      async () => {
        const result = await callDependency("D1", () =>
          updateEndpoint(c.env.DB, accountOfCaller(c), endpointId, changes, new Date().toISOString()),
        );
        if (!result) return notFound(endpointId);
        // The endpoint is locked itself, or (a lock made since the check above) the URL asked for is another's.
        if (
          result.locked &&
          body.status === "enabled" &&
          result.row.disabled_for_leak !== null &&
          result.row.disabled_by !== "operator"
        )
          return unconfirmed(url ?? result.row.url);
        if (
          result.locked &&
          url !== undefined &&
          url !== result.row.url &&
          (await callDependency("D1", () => hostLock(c.env.DB, webhookHost(url)!)))
        )
          return lockedHost(webhookHost(url)!);
        if (result.locked)
          return result.row.status === "disabled" && result.row.disabled_by === "operator"
            ? lockedEndpoint()
            : lockedUrl();
        return result.row;
      },
    );
    // An endpoint enabled again is watched by the dispatcher from its next pass.
    if (body.status === "enabled") wakeDispatcher(c);
    return jsonBody(c, endpointJson(updated));
  },
});
