/**
 * The audit of key operations (the D1 table key_events, docs/operations.md#api-keys):
 * one row for every operation on a key, from `npm run keys` or the operator
 * API, with who made it. Never a key or a hash. The statements are written
 * once, here, for the worker (bound) and the keys command (through wrangler).
 */
export type KeyOperation = "create" | "update" | "rotate" | "revoke" | "unban";

export interface KeyEvent {
  at: string;
  operation: KeyOperation;
  keyId: string;
  /** What changed (plan, limits, name, scopes, expiry, the keys an update reached, the key a rotation made). */
  changes: Record<string, unknown>;
  /** The operator token's name for the operator API; `cli:<user>` for npm run keys. */
  actor: string;
}

/** Appends one event and returns its row id, so an operation that then fails can take its row back. */
export const INSERT_KEY_EVENT = "INSERT INTO key_events (at, operation, key_id, changes, actor) VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id";
export const DELETE_KEY_EVENT = "DELETE FROM key_events WHERE id = ?1";
export const KEY_HISTORY = "SELECT at, operation, key_id, changes, actor FROM key_events WHERE key_id = ?1 ORDER BY id";

export const keyEventValues = (event: KeyEvent): string[] => [event.at, event.operation, event.keyId, JSON.stringify(event.changes), event.actor];

export interface KeyEventRow {
  at: string;
  operation: KeyOperation;
  key_id: string;
  changes: string;
  actor: string;
}

export const keyEventOf = (row: KeyEventRow): KeyEvent => ({
  at: row.at,
  operation: row.operation,
  keyId: row.key_id,
  changes: JSON.parse(row.changes) as Record<string, unknown>,
  actor: row.actor,
});

/**
 * Runs an operation with its audit row: the row first, then the operation;
 * when the operation fails, the row is taken back. So the audit never misses
 * an operation that happened, and holds one that did not only if taking the
 * row back failed too, which the caller reports (docs/operations.md#operator-api).
 */
export async function withAuditRow<Rows, T>(
  insert: () => Promise<Rows>,
  remove: (rows: Rows) => Promise<unknown>,
  operation: () => Promise<T>,
): Promise<T> {
  const rows = await insert();
  try {
    return await operation();
  } catch (error) {
    try {
      await remove(rows);
    } catch (removal) {
      throw new AggregateError([error, removal], `the operation failed and its audit rows ${JSON.stringify(rows)} could not be taken back`);
    }
    throw error;
  }
}
