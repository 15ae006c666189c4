/**
 * The order events' sequence across a D1 Time Travel restore
 * (docs/operations.md#restoring-d1). A restore rewinds the database, the
 * AUTOINCREMENT counter of `order_events` with it, so new events would take
 * ids that receivers have already seen and deduplicated, and feed cursors
 * past the restored head would skip them. Before restoring, the operator
 * notes the sequence; after, it is raised back to that value, so every new
 * event's id is above every id ever handed out.
 */
import type { D1Queryable } from "../lib/d1-session";

/** The highest id the sequence has handed out (0 when none), as decimal digits. */
export async function eventSequence(db: D1Queryable): Promise<string> {
  // sqlite_sequence's column has no type: a value written there as a real (2.0) must still read as digits.
  const row = await db
    .prepare(
      "SELECT CAST(CAST(coalesce(max(seq), 0) AS INTEGER) AS TEXT) AS seq FROM sqlite_sequence WHERE name = " +
        "'order_events'",
    )
    .first<{ seq: string }>();
  return row?.seq ?? "0";
}

/**
 * Raises the sequence to `at least` unless it is there already; what it is
 * then. AUTOINCREMENT never goes below a row's id once written, so a
 * placeholder event at that id, written and deleted in one transaction (a
 * D1 batch), raises it with no reader ever seeing the placeholder, and
 * without writing SQLite's own table.
 */
export async function raiseEventSequence(db: D1Queryable, atLeast: string): Promise<string> {
  await db.batch([
    db
      .prepare(
        "INSERT INTO order_events (seq, type, created_at, order_id, order_row) SELECT CAST(?1 AS INTEGER), " +
          "'order.updated', '1970-01-01T00:00:00.000Z', 0, '{}' " +
          "WHERE CAST(?1 AS INTEGER) > (SELECT coalesce(max(seq), 0) FROM order_events) AND CAST(?1 AS INTEGER) > " +
          "(SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'order_events')",
      )
      .bind(atLeast),
    db
      .prepare(
        "DELETE FROM order_events WHERE seq = CAST(?1 AS INTEGER) AND order_id = 0 AND created_at = " +
          "'1970-01-01T00:00:00.000Z'",
      )
      .bind(atLeast),
  ]);
  return eventSequence(db);
}
