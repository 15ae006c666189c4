/**
 * A webhook endpoint's row as its owner and operators read it, and the
 * statements more than one of their operations share. Each of the owner's
 * names the account, so one account never reads or changes another's
 * endpoint. A statement only one operation makes is in that operation's file.
 */
import type { D1Queryable } from "../../lib/d1-session";
import type { EndpointOrdering } from "../../webhook-delivery/endpoint-table";

export interface WebhookEndpointRow {
  id: string;
  budget: string;
  url: string;
  types: string;
  status: "enabled" | "disabled";
  created_at: string;
  secret_sealed: string;
  disabled_at: string | null;
  disabled_reason: string | null;
  disabled_by: "operator" | "owner" | "service" | null;
  /** What the operator who disabled it tells its owner; null for none. */
  disabled_note: string | null;
  previous_secret_sealed: string | null;
  previous_secret_until: string | null;
  rate_limit: number | null;
  /** When its URL last changed; null: not since it was made. */
  url_changed_at: string | null;
  /**
   * Since when its deliveries fail (null while they succeed) and when one last succeeded, as its lane last wrote them
   * (endpoint-health.ts).
   */
  failing_since: string | null;
  last_delivered_at: string | null;
  /** The leaked key whose revocation disabled it (enabled again only with its URL confirmed); null otherwise. */
  disabled_for_leak: string | null;
  /** An Ed25519 endpoint's public key (`whpk_...`); null: it signs with an HMAC secret. */
  public_key: string | null;
  ordering: EndpointOrdering;
}

export const COLUMNS =
  "id, budget, url, types, status, created_at, secret_sealed, disabled_at, disabled_reason, disabled_by, " +
  "disabled_note, previous_secret_sealed, previous_secret_until, " +
  "rate_limit, url_changed_at, failing_since, last_delivered_at, disabled_for_leak, public_key, ordering";

export async function accountEndpoints(db: D1Queryable, account: string): Promise<WebhookEndpointRow[]> {
  const { results } = await db
    .prepare(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE budget = ?1 ORDER BY created_at, id`)
    .bind(account)
    .all<WebhookEndpointRow>();
  return results;
}

export function accountEndpoint(db: D1Queryable, account: string, id: string): Promise<WebhookEndpointRow | null> {
  return db
    .prepare(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE budget = ?1 AND id = ?2`)
    .bind(account, id)
    .first<WebhookEndpointRow>();
}

/**
 * An operator disables an endpoint (nothing more is delivered to it, and its owner cannot enable it again),
 * with what its owner is told (`note`, each disabling's own); an earlier disabling by its owner or the service
 * gives way to it. False when there is none by that id.
 */
export async function disableEndpoint(
  db: D1Queryable,
  id: string,
  reason: string,
  at: string,
  note: string | null = null,
): Promise<boolean> {
  const { meta } = await db
    .prepare(
      "UPDATE webhook_endpoints SET status = 'disabled', disabled_at = CASE WHEN disabled_by IS 'operator' THEN " +
        "disabled_at ELSE ?2 END, " +
        "disabled_reason = CASE WHEN disabled_by IS 'operator' THEN disabled_reason ELSE ?3 END, disabled_by = " +
        "'operator', disabled_note = ?4 WHERE id = ?1",
    )
    .bind(id, at, reason, note)
    .run();
  return meta.changes === 1;
}
