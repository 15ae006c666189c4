/**
 * The order events' sequence across a D1 restore (docs/operations.md#restoring-d1): a restore rewinds the AUTOINCREMENT
 * counter, so new events would reuse ids receivers have seen. The sequence noted before is raised back after, keeping
 * every new id above every id handed out.
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
 * Raises the sequence to at least `atLeast`; what it is then. A placeholder event at that id, written and deleted in
 * one batch, raises AUTOINCREMENT unseen, without writing SQLite's own table.
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
