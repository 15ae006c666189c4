/**
 * The audit of key operations (the D1 table key_events, docs/operations.md#api-keys):
 * one row for every operation on a key, from `npm run keys` or the operator
 * API, the console's sign-ins and links, and what a key does to its own
 * account's keys, with who made it. Never a key, a hash, a link or a session. Its statements
 * are here, and auditedKeyOperation() runs an operation with its row.
 */
import { callDependency } from "../lib/call-dependency";
import { withAuditRow } from "../lib/audit-row";

export type KeyOperation =
  | "create"
  | "update"
  | "rotate"
  | "revoke"
  | "unban"
  | "console_link"
  | "console_sign_in"
  | "console_sign_out";

export interface KeyEvent {
  /** Made once per operation, before its row is first written: a retried insert finds the row instead of adding one. */
  id: string;
  at: string;
  operation: KeyOperation;
  keyId: string;
  /** What changed (plan, limits, name, scopes, expiry, the keys an update reached, the key a rotation made). */
  changes: Record<string, unknown>;
  /** The operator token's name for the operator API; `cli:<user>` for npm run keys. */
  actor: string;
  /** Set when the operation failed in a way that may have come after it took effect. */
  outcome?: "unknown";
}

/**
 * Appends one event and returns its row id, so an operation that then fails
 * can take its row back. Written again with the same event id (a retry whose
 * first answer was lost), it returns the row the first attempt wrote.
 */
export const INSERT_KEY_EVENT =
  "INSERT INTO key_events (at, operation, key_id, changes, actor, event_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6) " +
  "ON CONFLICT (event_id) DO UPDATE SET event_id = excluded.event_id RETURNING id";
export const DELETE_KEY_EVENT = "DELETE FROM key_events WHERE id = ?1";
export const MARK_KEY_EVENT_UNKNOWN = "UPDATE key_events SET outcome = 'unknown' WHERE id = ?1";
/** A key's events, oldest first, from after row `?2` (0: the first), at most `?3`. */
export const KEY_HISTORY =
  "SELECT id, at, operation, key_id, changes, actor, event_id, outcome FROM key_events WHERE key_id = ?1 AND id > ?2 " +
  "ORDER BY id LIMIT ?3";

export const keyEventValues = (event: KeyEvent): string[] => [
  event.at,
  event.operation,
  event.keyId,
  JSON.stringify(event.changes),
  event.actor,
  event.id,
];

export interface KeyEventRow {
  id: number;
  at: string;
  operation: KeyOperation;
  key_id: string;
  changes: string;
  actor: string;
  event_id: string | null;
  outcome: "unknown" | null;
}

export const keyEventOf = (row: KeyEventRow): KeyEvent => ({
  id: row.event_id ?? "",
  at: row.at,
  operation: row.operation,
  keyId: row.key_id,
  changes: JSON.parse(row.changes) as Record<string, unknown>,
  actor: row.actor,
  ...(row.outcome === "unknown" && { outcome: "unknown" as const }),
});

/**
 * Does one operation on a key with its audit row in the worker's D1 (the row
 * first): withAuditRow() bound to the database. The operation is handed its
 * row's id (addKeyEventChanges() adds what it learned).
 */
export async function auditedKeyOperation<T>(
  db: D1Database,
  event: Omit<KeyEvent, "id" | "at">,
  operation: (rowId: number) => Promise<T>,
): Promise<T> {
  const row: KeyEvent = { id: crypto.randomUUID(), at: new Date().toISOString(), ...event };
  return withAuditRow(
    async () =>
      (await callDependency("D1", () =>
        db
          .prepare(INSERT_KEY_EVENT)
          .bind(...keyEventValues(row))
          .first<number>("id"),
      ))!,
    {
      remove: (rowId) => callDependency("D1", () => db.prepare(DELETE_KEY_EVENT).bind(rowId).run()),
      markUnknown: (rowId) => callDependency("D1", () => db.prepare(MARK_KEY_EVENT_UNKNOWN).bind(rowId).run()),
    },
    operation,
  );
}

/**
 * Adds to an audit row's changes what its operation learned as it went (a leak's ending: what it ended, and that it
 * did).
 */
export const addKeyEventChanges = (db: D1Database, rowId: number, added: Record<string, unknown>) =>
  callDependency("D1", () =>
    db
      .prepare("UPDATE key_events SET changes = json_patch(changes, ?2) WHERE id = ?1")
      .bind(rowId, JSON.stringify(added))
      .run(),
  );
