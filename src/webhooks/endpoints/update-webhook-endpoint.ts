import type { D1Queryable } from "../../lib/d1-session";
import { defineOperation } from "../../framework/operations/define-operation";
import { readJsonBody } from "../../framework/operations/read-json-body";
import { ApiError } from "../../framework/api-error";
import { jsonBody } from "../../framework/counted-body";
import { callDependency } from "../../lib/call-dependency";
import { wakeDispatcher } from "../../webhook-delivery/dispatcher-calls";
import { auditedUnlessRefused } from "./endpoint-audit";
import { UpdateWebhookEndpoint, WebhookEndpoint } from "./webhook-endpoint-schemas";
import { keyOfCaller } from "../../keys/require-api-key";
import { refuseRotatedAway } from "../../keys/own-keys/acting-key";
import { endpointJson } from "./endpoint-json";
import { lockedEndpoint, lockedHost, lockedUrl, lockRefusal } from "./endpoint-locks";
import { hostLock } from "../../webhook-delivery/host-lock-table";
import { normalWebhookUrl, servedLocally, webhookHost, webhookUrlProblem } from "./webhook-url";
import { accountOfCaller, ENDPOINT_PARAMS, notFound, requireEventScope, WEBHOOKS } from "./webhook-endpoint-operation";
import { HOST_LOCKED } from "../../webhook-delivery/host-lock-table";
import type { EndpointOrdering } from "../../webhook-delivery/endpoint-table";
import { accountEndpoint, COLUMNS, type WebhookEndpointRow } from "./endpoint-rows";
import { LOCKED } from "../../webhook-delivery/endpoint-table";

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
    requireEventScope(c);
    refuseRotatedAway(c);
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
    // The URL it will deliver to is the one to confirm (a leaked key may have pointed it anywhere), checked in the
    // update itself.
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
          (result.row.disabled_by ?? "operator") !== "operator"
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
          return result.row.status === "disabled" && (result.row.disabled_by ?? "operator") === "operator"
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

/** An account's endpoints an operator disabled: their URLs no owner may point an endpoint at. */
export async function lockedEndpoints(db: D1Queryable, account: string): Promise<{ id: string; url: string }[]> {
  const { results } = await db
    .prepare(`SELECT id, url FROM webhook_endpoints WHERE budget = ?1 AND ${LOCKED}`)
    .bind(account)
    .all<{ id: string; url: string }>();
  return results;
}

/** What an owner changes of its endpoint; a field left out stays as it is. */
export interface EndpointChanges {
  url?: string;
  /** Comma-separated, as stored. */
  types?: string;
  status?: "enabled" | "disabled";
  /** null: no limit. */
  rateLimit?: number | null;
  /** How it receives from the next delivery on. */
  ordering?: EndpointOrdering;
  /**
   * The URL the owner confirmed, normal form: enabling one disabled for a leaked key needs it to be the URL it will
   * deliver to.
   */
  confirmedUrl?: string;
  /** The key asking: never the leaked key itself, whatever it confirms. */
  keyId?: string;
  /** The new URL's host, normal form: never one an operator locked. */
  host?: string;
}

/**
 * Changes an account's endpoint, in one statement: enabling clears why it was
 * disabled, disabling records the owner as who did. Null when the account has
 * no endpoint by that id. Nothing changes (the row is read back: `locked`)
 * when it asks to enable one an operator disabled, or one disabled for a
 * leaked key without its URL confirmed, to move such an endpoint's URL, or
 * to point it at the URL of another an operator disabled.
 */
export async function updateEndpoint(
  db: D1Queryable,
  account: string,
  id: string,
  changes: EndpointChanges,
  at: string,
): Promise<{ row: WebhookEndpointRow; locked: boolean } | null> {
  const enable = changes.status === "enabled" ? 1 : 0;
  const disable = changes.status === "disabled" ? 1 : 0;
  const row = await db
    .prepare(
      "UPDATE webhook_endpoints SET url = coalesce(?3, url), url_changed_at = CASE WHEN ?3 IS NOT NULL AND ?3 IS NOT " +
        "url THEN ?7 ELSE url_changed_at END, types = coalesce(?4, types), " +
        // Who set the parts a leaked key could aim, kept on the row (docs/api.md#what-a-leak-ends).
        "url_set_by = CASE WHEN ?3 IS NOT NULL THEN ?11 ELSE url_set_by END, " +
        "types_set_by = CASE WHEN ?4 IS NOT NULL THEN ?11 ELSE types_set_by END, " +
        "status = CASE WHEN ?5 THEN 'enabled' WHEN ?6 THEN 'disabled' ELSE status END, " +
        "disabled_at = CASE WHEN ?5 THEN NULL WHEN ?6 THEN coalesce(disabled_at, ?7) ELSE disabled_at END, " +
        "disabled_reason = CASE WHEN ?5 THEN NULL WHEN ?6 THEN coalesce(disabled_reason, 'disabled by its owner') " +
        "ELSE disabled_reason END, " +
        "disabled_by = CASE WHEN ?5 THEN NULL WHEN ?6 THEN coalesce(disabled_by, 'owner') ELSE disabled_by END, " +
        "disabled_for_leak = CASE WHEN ?5 THEN NULL ELSE disabled_for_leak END, " +
        // Enabled again, a failing endpoint starts a new period (docs/api.md#failing-endpoints).
        "failing_since = CASE WHEN ?5 AND status = 'disabled' THEN NULL ELSE failing_since END, " +
        "rate_limit = CASE WHEN ?8 THEN ?9 ELSE rate_limit END, ordering = coalesce(?13, ordering) " +
        `WHERE budget = ?1 AND id = ?2 AND NOT (?5 AND ${LOCKED}) AND NOT (?3 IS NOT NULL AND ?3 IS NOT url AND ` +
        `${LOCKED}) ` +
        "AND NOT (?5 AND disabled_for_leak IS NOT NULL AND (?10 IS NOT coalesce(?3, url) OR disabled_for_leak IS " +
        "?11)) " +
        `AND NOT (?3 IS NOT NULL AND ?3 IS NOT url AND ${HOST_LOCKED(12)}) ` +
        // Unqualified, the lock's columns are the other endpoint's (SQLite reads a name in the innermost FROM first).
        `AND NOT (?3 IS NOT NULL AND EXISTS (SELECT 1 FROM webhook_endpoints AS other WHERE other.budget = ?1 AND ` +
        `other.id <> ?2 AND other.url = ?3 AND ${LOCKED})) ` +
        `RETURNING ${COLUMNS}`,
    )
    .bind(
      account,
      id,
      changes.url ?? null,
      changes.types ?? null,
      enable,
      disable,
      at,
      changes.rateLimit === undefined ? 0 : 1,
      changes.rateLimit ?? null,
      changes.confirmedUrl ?? null,
      changes.keyId ?? null,
      changes.host ?? null,
      changes.ordering ?? null,
    )
    .first<WebhookEndpointRow>();
  if (row) return { row, locked: false };
  const unchanged = await accountEndpoint(db, account, id);
  return unchanged && { row: unchanged, locked: true };
}
