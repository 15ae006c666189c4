/**
 * The audit of actions on webhook endpoints in D1 (migrations/0016_webhook_endpoint_owner_changes.sql,
 * 0019): a row with each change, by whoever made it (an owner's key, an operator, a leaked key's revocation),
 * and its prune. Beside the endpoints' own table: every change to one is written with its row.
 */
import { withAuditRow } from "../keys/audit";
import { callDependency } from "../lib/dependency";

/** What is recorded of an action on an endpoint (migrations/0016_webhook_endpoint_owner_changes.sql, 0019). */
export interface EndpointEvent {
  endpointId: string;
  operation: "create" | "delete" | "disable" | "enable" | "update" | "rotate_secret" | "recover" | "retry" | "test";
  changes: Record<string, unknown>;
  /** The operator's name, or `key:<id>` for the owner's key that asked. */
  actor: string;
  at: string;
}

/**
 * Runs a change to an endpoint with its audit row, as every key operation
 * has (keys/audit.ts): the row first; taken back when the change was not
 * made (OperationNotTaken), kept marked 'unknown' when it may have been.
 */
export function auditedEndpointChange<T>(db: D1Database, event: EndpointEvent, change: () => Promise<T>): Promise<T> {
  return withAuditRow(
    async () =>
      (await callDependency("D1", () =>
        db
          .prepare(
            "INSERT INTO webhook_endpoint_events (event_id, at, operation, endpoint_id, changes, actor) VALUES (?1, ?2, ?3, ?4, ?5, ?6) " +
              "ON CONFLICT (event_id) DO UPDATE SET event_id = excluded.event_id RETURNING id",
          )
          .bind(crypto.randomUUID(), event.at, event.operation, event.endpointId, JSON.stringify(event.changes), event.actor)
          .first<number>("id"),
      ))!,
    {
      remove: (rowId) => callDependency("D1", () => db.prepare("DELETE FROM webhook_endpoint_events WHERE id = ?1").bind(rowId).run()),
      markUnknown: (rowId) => callDependency("D1", () => db.prepare("UPDATE webhook_endpoint_events SET outcome = 'unknown' WHERE id = ?1").bind(rowId).run()),
    },
    change,
  );
}

/** How long the endpoints' audit is kept: a year of who did what (docs/design/order-events.md#retention). */
export const ENDPOINT_AUDIT_RETENTION_MS = 365 * 86_400_000;
/** Rows one run deletes at most; the cron runs every minute. */
const AUDIT_PRUNE_BATCH = 1_000;

/** Deletes audit rows older than ENDPOINT_AUDIT_RETENTION_MS at `now`, oldest first, a batch a run; how many. */
export async function pruneEndpointAudit(db: D1Database, now: number): Promise<number> {
  const { meta } = await db
    .prepare("DELETE FROM webhook_endpoint_events WHERE id IN (SELECT id FROM webhook_endpoint_events WHERE at < ?1 ORDER BY at LIMIT ?2)")
    .bind(new Date(now - ENDPOINT_AUDIT_RETENTION_MS).toISOString(), AUDIT_PRUNE_BATCH)
    .run();
  return meta.changes;
}
