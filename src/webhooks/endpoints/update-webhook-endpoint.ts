import { defineOperation } from "../../framework/operations/define-operation";
import { readJsonBody } from "../../framework/operations/read-json-body";
import { ApiError } from "../../framework/api-error";
import { jsonBody } from "../../framework/counted-body";
import { callDependency } from "../../lib/dependency";
import { wakeDispatcher } from "../../webhook-delivery/dispatcher-calls";
import { auditedUnlessRefused } from "./endpoint-audit";
import { UpdateWebhookEndpoint, WebhookEndpoint } from "./webhook-endpoint-schemas";
import { lockedEndpoints, updateEndpoint } from "../../webhook-delivery/endpoint-table";
import { endpointJson } from "./endpoint-json";
import { lockedEndpoint, lockedUrl, lockRefusal } from "./endpoint-locks";
import { normalWebhookUrl, servedLocally, webhookUrlProblem } from "./webhook-url";
import { budgetOfCaller, ENDPOINT_PARAMS, notFound, requireEventScope, WEBHOOKS } from "./webhook-endpoint-operation";

/** Enabling refused: nothing changed, so the audit row goes too. */

/** PATCH /v2/webhook-endpoints/{endpointId}: its URL, its types, enabled or disabled; audited. */
export const updateWebhookEndpoint = defineOperation({
  ...WEBHOOKS,
  operationId: "updateWebhookEndpoint",
  method: "patch",
  path: "/webhook-endpoints/{endpointId}",
  summary: "Change a webhook endpoint",
  description:
    "Changes what is sent: the URL (checked as a new endpoint's), the event types, or the status. Disabled, nothing is delivered; " +
    "enabled again, deliveries resume with the next event (the service's own disabling after failures included; an operator's is " +
    "lifted only by an operator). Audited with the key that asked.",
  params: ENDPOINT_PARAMS,
  requestBody: { description: "What to change: any of url, types and status", schema: UpdateWebhookEndpoint },
  responses: { 200: { description: "The endpoint as it is now", body: WebhookEndpoint } },
  errors: ["unsupported_media_type", "body_too_large", "invalid_body", "invalid_webhook_url", "webhook_endpoint_not_found", "webhook_endpoint_locked"],
  async handle(c, { endpointId }) {
    requireEventScope(c);
    const body = await readJsonBody(c, UpdateWebhookEndpoint);
    let url: string | undefined;
    if (body.url !== undefined) {
      const problem = webhookUrlProblem(body.url, servedLocally(c.get("config").baseUrl));
      if (problem) throw new ApiError("invalid_webhook_url", `${problem}.`);
      url = normalWebhookUrl(body.url);
      const locked = await callDependency("D1", () => lockedEndpoints(c.env.DB, budgetOfCaller(c)));
      const refusal = lockRefusal(locked, url, endpointId);
      if (refusal) throw refusal;
    }
    const changes = { url, status: body.status, types: body.types && [...new Set(body.types)].sort().join(","), rateLimit: body.rateLimit };
    const updated = await auditedUnlessRefused(c, { endpointId, operation: "update", changes: { ...body, ...(url !== undefined && { url }) } }, async () => {
      const result = await callDependency("D1", () => updateEndpoint(c.env.DB, budgetOfCaller(c), endpointId, changes, new Date().toISOString()));
      if (!result) return notFound(endpointId);
      // The endpoint is locked itself, or (a lock made since the check above) the URL asked for is another's.
      if (result.locked) return result.row.status === "disabled" && (result.row.disabled_by ?? "operator") === "operator" ? lockedEndpoint() : lockedUrl();
      return result.row;
    });
    // An endpoint enabled again is watched by the dispatcher from its next pass.
    if (body.status === "enabled") wakeDispatcher(c);
    return jsonBody(c, endpointJson(updated));
  },
});
