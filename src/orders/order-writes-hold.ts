/**
 * Order writes held after a D1 restore (docs/operations.md#restoring-d1): while the sequence is below what the
 * dispatcher handed out, triggers refuse order writes, so no event reuses an id.
 */
import type { D1Queryable } from "../lib/d1-session";

/** What the triggers' refusal says: how a write refused by the hold is told from a failure. */
const HOLD_MESSAGE = "order writes are held until the order event sequence is raised";

/** How long a caller is told to wait: the hold lasts until an operator raises the sequence. */
export const HELD_RETRY_AFTER_SECONDS = 60;

export const isHeldWrite = (error: unknown): boolean => error instanceof Error && error.message.includes(HOLD_MESSAGE);

/** Holds order writes while `sequence` is below `handedOut`, keeping the first hold's time. */
export async function holdOrderWrites(
  db: D1Queryable,
  sequence: string,
  handedOut: string,
  since: string,
): Promise<void> {
  await db
    .prepare(
      "INSERT INTO order_writes_hold (id, since, sequence, handed_out) VALUES (1, ?1, CAST(?2 AS " +
        "INTEGER), CAST(?3 AS " +
        "INTEGER)) ON CONFLICT (id) DO UPDATE SET sequence = excluded.sequence, handed_out = excluded.handed_out",
    )
    .bind(since, sequence, handedOut)
    .run();
}

/** Lets order writes go on: the sequence was raised to `sequence`, at or above what the hold says was handed out. */
export async function releaseOrderWrites(db: D1Queryable, sequence: string): Promise<void> {
  await db.prepare("DELETE FROM order_writes_hold WHERE handed_out <= CAST(?1 AS INTEGER)").bind(sequence).run();
}

/** The hold, when there is one. */
export const orderWritesHold = (db: D1Queryable) =>
  db.prepare(
    "SELECT since, CAST(sequence AS TEXT) AS sequence, CAST(handed_out AS TEXT) AS handedOut FROM order_writes_hold " +
      "WHERE id = 1",
  );
