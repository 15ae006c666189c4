import { defineOperation } from "../../framework/operations/define-operation";
import { readJsonBody } from "../../framework/operations/read-json-body";
import { ApiError } from "../../framework/api-error";
import { jsonBody } from "../../framework/counted-body";
import { callDependency } from "../../lib/call-dependency";
import { rfc3339ToUtc } from "../../lib/date-time";
import { laneOf } from "../../webhook-delivery/lane-calls";
import { OperationNotTaken } from "../../lib/audit-row";
import { auditedEndpointChange } from "../../webhook-delivery/endpoint-audit-rows";
import { RecoveredWebhookDeliveries, RecoverWebhookDeliveries } from "./webhook-endpoint-schemas";
import { disabledBecause } from "./endpoint-json";
import { accountOfCaller, ENDPOINT_PARAMS, notFound, WEBHOOKS } from "./webhook-endpoint-operation";
import { keyOfCaller } from "../../keys/caller";
import { normalWebhookUrl } from "./webhook-url";
import { accountEndpoint } from "../../webhook-delivery/endpoint-table";

/** Failed deliveries one request makes due at most; `more` says to ask again. */
const RECOVER_AT_ONCE = 1_000;

/** POST /v2/webhook-endpoints/{endpointId}/recover: every failed delivery since a time, sent again; audited. */
export const recoverWebhookDeliveries = defineOperation({
  ...WEBHOOKS,
  beyondItself: "webhook endpoints",
  operationId: "recoverWebhookDeliveries",
  method: "post",
  path: "/webhook-endpoints/{endpointId}/recover",
  summary: "Send again every failed delivery since a time",
  description:
    `After the receiver is fixed: each failed delivery made since \`since\` is due now, with the same webhook-id and ` +
    `a fresh ` +
    `retry schedule, ${RECOVER_AT_ONCE} a request in event order; \`more\` says to ask again. The endpoint must be ` +
    "enabled; when its URL changed after `since`, `confirmUrl` must name the URL they will go to. Audited with the " +
    "key that asked.",
  params: ENDPOINT_PARAMS,
  requestBody: { description: "Since when", schema: RecoverWebhookDeliveries },
  responses: { 202: { description: "How many were made due", body: RecoveredWebhookDeliveries } },
  errors: [
    "unsupported_media_type",
    "body_too_large",
    "invalid_body",
    "webhook_endpoint_not_found",
    "webhook_endpoint_disabled",
    "webhook_url_unconfirmed",
    "key_acts_only_on_itself",
  ],
  async handle(c, { endpointId }) {
    const { since, confirmUrl } = await readJsonBody(c, RecoverWebhookDeliveries);
    // A valid form may still name no instant a date-time can hold (an offset moving it before the year 0000).
    const from = rfc3339ToUtc(since);
    if (from === undefined)
      throw new ApiError(
        "invalid_body",
        "since: not an instant a date-time can hold once in UTC (its offset moves it out of years 0000 to 9999).",
      );
    const db = c.env.DB;
    const endpoint = await callDependency("D1", () => accountEndpoint(db, accountOfCaller(c), endpointId));
    if (!endpoint) throw notFound(endpointId);
    if (endpoint.status === "disabled") {
      throw new ApiError(
        "webhook_endpoint_disabled",
        `The endpoint is ${disabledBecause(endpoint)}: enable it first, then recover.`,
      );
    }
    // Failed deliveries are not re-aimed at a new host unless the owner says so.
    if (
      endpoint.url_changed_at !== null &&
      endpoint.url_changed_at > from &&
      (confirmUrl === undefined || normalWebhookUrl(confirmUrl) !== endpoint.url)
    ) {
      throw new ApiError(
        "webhook_url_unconfirmed",
        `The endpoint's URL changed at ${endpoint.url_changed_at}, after since: deliveries that failed at the URL ` +
          `before would go to ${endpoint.url}. Send "confirmUrl": "${endpoint.url}" to send them there.`,
      );
    }
    const at = new Date().toISOString();
    // A lane at its cap takes none now, and says more remain.
    let more = false;
    const recovering = auditedEndpointChange(
      db,
      { endpointId, operation: "recover", changes: { since: from }, actor: `key:${keyOfCaller(c).id}`, at },
      async () => {
        const recovered = await callDependency("webhook lane", () =>
          laneOf(c.env, endpointId).recover(endpointId, Date.parse(from), RECOVER_AT_ONCE),
        );
        // Nothing to recover changed nothing: no audit row stays for it.
        more = recovered.more;
        if (recovered.recovered === 0) throw new OperationNotTaken("no failed delivery since then");
        return recovered;
      },
    );
    const recovered = await recovering.catch((error: unknown) => {
      if (error instanceof OperationNotTaken) return { recovered: 0, more };
      throw error;
    });
    return jsonBody(c, recovered, 202);
  },
});
