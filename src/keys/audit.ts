/**
 * The audit of key operations (the D1 table key_events, docs/operations.md#api-keys):
 * one row for every operation on a key, from `npm run keys` or the operator
 * API, the console's sign-ins and links, and what a key does to its own
 * budget's keys, with who made it. Never a key, a hash, a link or a session. The statements are written
 * once, here, for the worker (bound) and the keys command (through wrangler).
 */
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
 * Thrown by an operation that failed before it changed anything (nothing was
 * sent, or the other side refused it unread): its audit row is taken back.
 */
export class OperationNotTaken extends Error {
  /** What the client is answered instead, when the operation was refused (keys/key-refusal.ts). */
  readonly answer: Error | undefined;

  constructor(message: string, options?: ErrorOptions & { answer?: Error }) {
    super(message, options);
    this.name = "OperationNotTaken";
    this.answer = options?.answer;
  }
}

/** What to do with an operation's rows when it fails: take them back, or keep them marked 'unknown'. */
export interface AuditRowsOnFailure<Rows> {
  remove(rows: Rows): Promise<unknown>;
  markUnknown(rows: Rows): Promise<unknown>;
}

/**
 * Runs an operation with its audit row: the row first, then the operation.
 * When the operation fails before changing anything (OperationNotTaken), the
 * row is taken back; any other failure may have come after it took effect
 * (a write whose answer was lost), so the row stays, marked 'unknown'. The
 * audit never misses an operation that happened (docs/operations.md#operator-api).
 * The operation is handed its rows, to add to them what it learns as it goes.
 */
export async function withAuditRow<Rows, T>(
  insert: () => Promise<Rows>,
  onFailure: AuditRowsOnFailure<Rows>,
  operation: (rows: Rows) => Promise<T>,
): Promise<T> {
  const rows = await insert();
  try {
    return await operation(rows);
  } catch (error) {
    const notTaken = error instanceof OperationNotTaken;
    try {
      await (notTaken ? onFailure.remove(rows) : onFailure.markUnknown(rows));
    } catch (settling) {
      throw new AggregateError(
        [error, settling],
        `the operation failed and its audit rows ${JSON.stringify(rows)} could not be ` +
          `${notTaken ? "taken back" : "marked unknown"}`,
      );
    }
    throw error;
  }
}
