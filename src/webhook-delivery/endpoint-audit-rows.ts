/** The audit of actions on webhook endpoints: a row with each change, by whoever made it, and its prune. */
import { withAuditRow } from "../lib/audit-row";
import { callDependency } from "../lib/call-dependency";

/** What is recorded of an action on an endpoint (migrations/0001_baseline.sql). */
export interface EndpointEvent {
  endpointId: string;
  operation: "create" | "delete" | "disable" | "enable" | "update" | "rotate_secret" | "recover" | "retry" | "test";
  changes: Record<string, unknown>;
  /** The operator's name, or `key:<id>` for the owner's key that asked. */
  actor: string;
  at: string;
  /** The endpoint's account; left out, the endpoint's as it is when the row is written. */
  budget?: string;
}

/** Runs a change with its audit row first: taken back if not made, kept 'unknown' if it may have been. */
export function auditedEndpointChange<T>(db: D1Database, event: EndpointEvent, change: () => Promise<T>): Promise<T> {
  return withAuditRow(
    async () =>
      (await callDependency("D1", () =>
        db
          .prepare(
            "INSERT INTO webhook_endpoint_events (event_id, at, operation, endpoint_id, changes, actor, budget) " +
              "VALUES (?1, ?2, ?3, ?4, ?5, ?6, coalesce(?7, (SELECT budget FROM webhook_endpoints WHERE id = ?4))) " +
              "ON CONFLICT (event_id) DO UPDATE SET event_id = excluded.event_id RETURNING id",
          )
          .bind(
            crypto.randomUUID(),
            event.at,
            event.operation,
            event.endpointId,
            JSON.stringify(event.changes),
            event.actor,
            event.budget ?? null,
          )
          .first<number>("id"),
      ))!,
    {
      remove: (rowId) =>
        callDependency("D1", () => db.prepare("DELETE FROM webhook_endpoint_events WHERE id = ?1").bind(rowId).run()),
      markUnknown: (rowId) =>
        callDependency("D1", () =>
          db.prepare("UPDATE webhook_endpoint_events SET outcome = 'unknown' WHERE id = ?1").bind(rowId).run(),
        ),
    },
    change,
  );
}

/**
 * Counts a retry or test event in one row an endpoint, key and hour, so they do not grow the audit a row each;
 * `unknown` when one may have taken effect before it failed.
 */
export async function countEndpointAction(
  db: D1Database,
  event: EndpointEvent,
  outcomeUnknown: boolean,
): Promise<void> {
  const hour = event.at.slice(0, 13);
  await callDependency("D1", () =>
    db
      .prepare(
        "INSERT INTO webhook_endpoint_events (event_id, at, operation, endpoint_id, changes, actor, budget, outcome) " +
          "VALUES (?1, ?2, ?3, ?4, json_object('count', 1, 'last', json(?5)), ?6, ?7, CASE WHEN ?8 THEN 'unknown' " +
          "END) " +
          "ON CONFLICT (event_id) DO UPDATE SET at = excluded.at, changes = json_set(changes, '$.count', " +
          "(changes ->> " +
          "'$.count') + 1, '$.last', json(?5)), " +
          "outcome = coalesce(outcome, excluded.outcome)",
      )
      .bind(
        `${event.operation}:${event.endpointId}:${event.actor}:${hour}`,
        event.at,
        event.operation,
        event.endpointId,
        JSON.stringify(event.changes),
        event.actor,
        event.budget ?? null,
        outcomeUnknown ? 1 : 0,
      )
      .run(),
  );
}

/** How long the endpoints' audit is kept: a year of who did what (docs/design/order-events.md#retention). */
export const ENDPOINT_AUDIT_RETENTION_MS = 365 * 86_400_000;
/** Rows one run deletes at most; the cron runs every minute. */
const AUDIT_PRUNE_BATCH = 1_000;

/**
 * Deletes audit rows past ENDPOINT_AUDIT_RETENTION_MS, oldest first, a batch a run; how many. What a leak ends is read
 * from the endpoints' rows, never from here.
 */
export async function pruneEndpointAudit(db: D1Database, now: number): Promise<number> {
  const { meta } = await db
    .prepare(
      "DELETE FROM webhook_endpoint_events WHERE id IN (SELECT id FROM webhook_endpoint_events WHERE at < ?1 " +
        "ORDER BY at LIMIT ?2)",
    )
    .bind(new Date(now - ENDPOINT_AUDIT_RETENTION_MS).toISOString(), AUDIT_PRUNE_BATCH)
    .run();
  return meta.changes;
}
