/**
 * Order events are kept 30 days (docs/design/order-events.md#retention): the
 * Worker's daily cron deletes older ones, oldest first, in bounded batches so
 * no statement holds the database for long, and moves the mark the feed
 * answers 410 cursor_expired by in the same transaction.
 */
export const EVENT_RETENTION_MS = 30 * 86_400_000;
const PRUNE_BATCH = 5_000;

/** Deletes the events older than the retention at `now` (Unix ms); returns how many. */
export async function pruneOrderEvents(db: D1Database, now: number): Promise<number> {
  // created_at is written as `YYYY-MM-DDTHH:MM:SS.sssZ`, so text order is time order.
  const cutoff = new Date(now - EVENT_RETENTION_MS).toISOString();
  const lastOfBatch = db.prepare(
    "SELECT max(seq) AS through FROM (SELECT seq FROM order_events WHERE created_at < ?1 ORDER BY seq LIMIT ?2)",
  );
  let deleted = 0;
  for (;;) {
    const through = await lastOfBatch.bind(cutoff, PRUNE_BATCH).first<number | null>("through");
    if (through === null) return deleted;
    // Everything up to the batch's last event goes, so the mark says exactly what is gone.
    const [, deletion] = await db.batch([
      db.prepare("UPDATE order_event_retention SET pruned_through = max(pruned_through, ?1) WHERE id = 1").bind(through),
      db.prepare("DELETE FROM order_events WHERE seq <= ?1").bind(through),
    ]);
    deleted += deletion!.meta.changes;
  }
}
