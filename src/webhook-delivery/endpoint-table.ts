/**
 * The webhook endpoints in D1 (migrations/0001_baseline.sql and
 * those after it) as the pipeline reads and writes them: the endpoints a
 * dispatch pass fans out to and where their lanes stand, one endpoint as its
 * lane sends to it, its health, the service's disabling. The owners' and
 * operators' statements are beside their operations (webhooks/endpoints/).
 */
import type { D1Queryable } from "../lib/d1-session";

/**
 * Disabled by an operator (the owners' and the service's statements both ask): only an operator enables it
 * again. A disabled endpoint that does not say who disabled it counts as locked: the safe reading.
 */
export const LOCKED = "status = 'disabled' AND coalesce(disabled_by, 'operator') = 'operator'";

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
  /** The leaked key whose revocation disabled it; null otherwise. */
  disabled_for_leak: string | null;
  /** fifo: one delivery at a time, in event order; concurrent: LANE_CONCURRENCY at once, in no order. */
  ordering: EndpointOrdering;
}

export type EndpointOrdering = "concurrent" | "fifo";

export function laneEndpoint(db: D1Queryable, id: string): Promise<LaneEndpoint | null> {
  return db
    .prepare(
      "SELECT id, budget, url, status, secret_sealed, previous_secret_sealed, previous_secret_until, rate_limit, " +
        "disabled_for_leak, ordering FROM webhook_endpoints WHERE id = ?1",
    )
    .bind(id)
    .first<LaneEndpoint>();
}

/** What its lane noted of an endpoint's deliveries (endpoint-health.ts). */
export async function recordEndpointHealth(
  db: D1Queryable,
  id: string,
  failingSince: string | null,
  lastDeliveredAt: string | null,
): Promise<void> {
  await db
    .prepare("UPDATE webhook_endpoints SET failing_since = ?2, last_delivered_at = ?3 WHERE id = ?1")
    .bind(id, failingSince, lastDeliveredAt)
    .run();
}

/**
 * The service disables an endpoint (its receiver answered 410, or refused a whole schedule), unless it is disabled
 * already.
 */
export async function disableByService(db: D1Queryable, id: string, reason: string, at: string): Promise<void> {
  await db
    .prepare(
      "UPDATE webhook_endpoints SET status = 'disabled', disabled_at = ?2, disabled_reason = ?3, disabled_by = " +
        "'service' WHERE id = ?1 AND status = 'enabled'",
    )
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
  /**
   * Null while its lane is at the dispatcher's mark; else the last event its lane was handed, and it catches up alone.
   */
  behind_after: string | null;
  /** When a lane behind is tried again (epoch ms); null: at the next pass. */
  behind_retry_at: number | null;
  /** Tries in a row its lane failed. */
  behind_failures: number;
}

export const enabledEndpoints = (db: D1Queryable) =>
  db.prepare(
    "SELECT id, types, CAST(from_seq AS TEXT) AS from_seq, CAST(behind_after AS TEXT) AS behind_after, " +
      "behind_retry_at, behind_failures " +
      "FROM webhook_endpoints WHERE status = 'enabled' ORDER BY id",
  );

/** Enabled endpoints whose lanes are behind the dispatcher's mark (their lanes failed to take events). */
export const countLanesBehind = (db: D1Queryable) =>
  db.prepare("SELECT count(*) AS behind FROM webhook_endpoints WHERE status = 'enabled' AND behind_after IS NOT NULL");

/**
 * Where an endpoint's lane stands after a pass: behind (and when to try it again), or at the mark (`behindAfter` null).
 */
export interface LaneStanding {
  id: string;
  behindAfter: string | null;
  retryAt: number | null;
  failures: number;
}

/** Records every lane whose standing a pass changed, in one statement whatever their number. */
export async function recordLaneStandings(db: D1Queryable, standings: readonly LaneStanding[]): Promise<void> {
  if (standings.length === 0) return;
  await db
    .prepare(
      "UPDATE webhook_endpoints SET behind_after = CAST(s.value ->> '$.behindAfter' AS INTEGER), behind_retry_at = " +
        "s.value ->> '$.retryAt', " +
        "behind_failures = s.value ->> '$.failures' FROM json_each(?1) AS s WHERE webhook_endpoints.id = s.value ->> " +
        "'$.id'",
    )
    .bind(JSON.stringify(standings))
    .run();
}

/**
 * The service disables an endpoint that a leaked key made or last changed (docs/api.md#what-a-leak-ends),
 * naming the key: its owner enables it again only with its URL confirmed. An operator's lock and its reason
 * stay as they are; any other disabling gives way to this one. False when there is none by that id.
 */
export async function disableForLeak(
  db: D1Queryable,
  id: string,
  keyId: string,
  reason: string,
  at: string,
): Promise<boolean> {
  const { meta } = await db
    .prepare(
      `UPDATE webhook_endpoints SET disabled_at = CASE WHEN status = 'disabled' THEN disabled_at ELSE ?3 END, status ` +
        `= 'disabled', ` +
        `disabled_reason = CASE WHEN ${LOCKED} THEN disabled_reason ELSE ?4 END, disabled_by = CASE WHEN ${LOCKED} ` +
        `THEN 'operator' ELSE 'service' END, ` +
        "disabled_for_leak = ?2 WHERE id = ?1",
    )
    .bind(id, keyId, at, reason)
    .run();
  return meta.changes === 1;
}
