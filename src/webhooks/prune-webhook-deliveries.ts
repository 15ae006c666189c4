/**
 * Webhook deliveries are kept as long as their events (30 days,
 * docs/design/order-events.md#retention): the daily cron deletes the settled
 * ones older than that, and those of deleted endpoints, in bounded batches,
 * so the database that holds the orders does not grow by a row per event
 * and endpoint for ever, and no statement holds it for long.
 */
import { EVENT_RETENTION_MS } from "../events/prune-order-events";

/** Rows one statement deletes at most. */
export const DELIVERY_PRUNE_BATCH = 1_000;

async function inBatches(statement: D1PreparedStatement): Promise<number> {
  let deleted = 0;
  for (;;) {
    const { meta } = await statement.run();
    deleted += meta.changes;
    if (meta.changes < DELIVERY_PRUNE_BATCH) return deleted;
  }
}

/** Deletes what is past keeping at `now` (Unix ms), deliveries and their attempts; returns how many deliveries. */
export async function pruneWebhookDeliveries(db: D1Database, now: number): Promise<number> {
  // updated_at is written as `YYYY-MM-DDTHH:MM:SS.sssZ`, so text order is time order. Pending ones stay: the consumer settles them.
  const settled = db
    .prepare(
      "DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries WHERE outcome <> 'pending' AND updated_at < ?1 LIMIT ?2)",
    )
    .bind(new Date(now - EVENT_RETENTION_MS).toISOString(), DELIVERY_PRUNE_BATCH);
  // Deleting an endpoint deletes its first batch at once (webhook-endpoint-store.ts); the rest goes here.
  const orphaned = db
    .prepare(
      "DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries WHERE endpoint_id NOT IN (SELECT id FROM webhook_endpoints) LIMIT ?1)",
    )
    .bind(DELIVERY_PRUNE_BATCH);
  // Attempts go with their deliveries: by age, and those of deleted endpoints.
  const oldAttempts = db
    .prepare("DELETE FROM webhook_attempts WHERE id IN (SELECT id FROM webhook_attempts WHERE at < ?1 LIMIT ?2)")
    .bind(new Date(now - EVENT_RETENTION_MS).toISOString(), DELIVERY_PRUNE_BATCH);
  const orphanedAttempts = db
    .prepare("DELETE FROM webhook_attempts WHERE id IN (SELECT id FROM webhook_attempts WHERE endpoint_id NOT IN (SELECT id FROM webhook_endpoints) LIMIT ?1)")
    .bind(DELIVERY_PRUNE_BATCH);
  const deliveries = (await inBatches(settled)) + (await inBatches(orphaned));
  await inBatches(oldAttempts);
  await inBatches(orphanedAttempts);
  return deliveries;
}
