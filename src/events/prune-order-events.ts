/**
 * Order events are kept 30 days (docs/design/order-events.md#retention): the
 * Worker's daily cron deletes older ones, oldest first, in bounded batches so
 * no statement holds the database for long.
 */
export const EVENT_RETENTION_MS = 30 * 86_400_000;
const PRUNE_BATCH = 5_000;

/** Deletes the events older than the retention at `now` (Unix ms); returns how many. */
export async function pruneOrderEvents(db: D1Database, now: number): Promise<number> {
  // created_at is written as `YYYY-MM-DDTHH:MM:SS.sssZ`, so text order is time order.
  const cutoff = new Date(now - EVENT_RETENTION_MS).toISOString();
  const prune = db.prepare("DELETE FROM order_events WHERE seq IN (SELECT seq FROM order_events WHERE created_at < ?1 ORDER BY seq LIMIT ?2)");
  let deleted = 0;
  for (;;) {
    const { meta } = await prune.bind(cutoff, PRUNE_BATCH).run();
    deleted += meta.changes;
    if (meta.changes < PRUNE_BATCH) return deleted;
  }
}
