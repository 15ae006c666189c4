import { withAuditRow } from "../../keys/audit";
import { callDependency } from "../../lib/dependency";

/** What is recorded of an endpoint's change (migrations/0016_webhook_endpoint_owner_changes.sql). */
export interface EndpointEvent {
  endpointId: string;
  operation: "disable" | "enable" | "update" | "rotate_secret" | "recover";
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
