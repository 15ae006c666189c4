/**
 * What the pipeline reads and writes of the webhook endpoints in D1
 * (migrations/0010_webhook_endpoints.sql): the endpoints a dispatch pass fans
 * out to, one endpoint as its lane sends to it, and the service's disabling
 * of an endpoint whose receiver refused everything. The owner's statements
 * on the same table are in src/webhooks/endpoints/webhook-endpoint-store.ts.
 */
import type { D1Queryable } from "../lib/d1-session";

/** An endpoint as its lane sends to it: where, signed with what, how fast, for whom. */
export interface LaneEndpoint {
  id: string;
  budget: string;
  url: string;
  status: "enabled" | "disabled";
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_until: string | null;
  /** Deliveries a second at most (its owner's `rateLimit`); null: as fast as the lane goes. */
  rate_limit: number | null;
}

export function laneEndpoint(db: D1Queryable, id: string): Promise<LaneEndpoint | null> {
  return db
    .prepare("SELECT id, budget, url, status, secret_sealed, previous_secret_sealed, previous_secret_until, rate_limit FROM webhook_endpoints WHERE id = ?1")
    .bind(id)
    .first<LaneEndpoint>();
}

/** The service disables an endpoint (its receiver answered 410, or refused a whole schedule), unless it is disabled already. */
export async function disableByService(db: D1Queryable, id: string, reason: string, at: string): Promise<void> {
  await db
    .prepare("UPDATE webhook_endpoints SET status = 'disabled', disabled_at = ?2, disabled_reason = ?3, disabled_by = 'service' WHERE id = ?1 AND status = 'enabled'")
    .bind(id, at, reason)
    .run();
}

/** An enabled endpoint as a dispatch pass matches events to it. */
export interface DispatchEndpoint {
  id: string;
  /** Comma-separated event types. */
  types: string;
  /** It receives the events after this one (the feed's head when it was made). */
  from_seq: string;
}

export const enabledEndpoints = (db: D1Queryable) =>
  db.prepare("SELECT id, types, CAST(from_seq AS TEXT) AS from_seq FROM webhook_endpoints WHERE status = 'enabled' ORDER BY id");
