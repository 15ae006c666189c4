/** The audit of key operations (key_events): a row for each, with who; never a key, hash or link. */
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

/** Who the audit names for what GitHub's secret scanning reported. */
export const SCANNER_ACTOR = "github-secret-scanning";

export interface KeyEvent {
  /** Made once per operation, before its row is first written: a retried insert finds the row instead of adding one. */
  id: string;
  at: string;
  operation: KeyOperation;
  keyId: string;
  /** What changed (plan, limits, name, scopes, expiry, the keys an update reached, the key a rotation made). */
  changes: Record<string, unknown>;
  /** Who did it: `key:<id>`, an operator's name, or SCANNER_ACTOR. */
  actor: string;
  /** Set when the operation failed in a way that may have come after it took effect. */
  outcome?: "unknown";
}

/** Appends an event and returns its row id; the same event id again (a retry) returns the first row. */
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

/** Does one operation on a key with its audit row (the row first); the operation gets the row's id. */
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

/** Adds what its operation learned to an audit row's changes. */
export const addKeyEventChanges = (db: D1Database, rowId: number, added: Record<string, unknown>) =>
  callDependency("D1", () =>
    db
      .prepare("UPDATE key_events SET changes = json_patch(changes, ?2) WHERE id = ?1")
      .bind(rowId, JSON.stringify(added))
      .run(),
  );
