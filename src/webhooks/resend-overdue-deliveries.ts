/**
 * The sweeper (docs/design/order-events.md#faults): a pending delivery long
 * past its due time has no message left in the queue (dropped after a
 * dependency failed it for longer than the queue retries, or a wait longer
 * than the queue can hold): it gets a new one. Run by the dispatcher's alarm.
 */
import type { D1Queryable } from "../lib/d1-session";
import type { DeliveryMessage } from "./dispatch-pass";

/**
 * How late a pending delivery may be before it counts as lost: longer than
 * a live message is late in the normal run (30 s of backoff after a
 * dependency's failure, a batch's second, a 10 s POST). After a longer
 * outage a live message and the sweeper's may both arrive: the consumer
 * lets only one of them count a step (delivery-attempt.ts).
 */
export const OVERDUE_AFTER_MS = 120_000;

/** Deliveries one statement marks and one queue batch carries (the Queues API's limit on a batch). */
export const SWEEP_BATCH = 100;
/** Batches one sweep sends at most; the next sweep takes the rest. */
export const SWEEP_BATCHES = 10;

/** Sends the overdue deliveries again, due now; how many. Marked before they are sent: a failed send leaves them overdue for the next sweep. */
export async function resendOverdueDeliveries(db: D1Queryable, queue: Pick<Queue<DeliveryMessage>, "sendBatch">, now: number): Promise<number> {
  const mark = db
    .prepare(
      "UPDATE webhook_deliveries SET next_attempt_at = ?2 WHERE id IN (SELECT id FROM webhook_deliveries " +
        "WHERE outcome = 'pending' AND coalesce(next_attempt_at, created_at) < ?1 " +
        // A deleted endpoint's deliveries wait for the daily prune; sent again, they would push the lost ones back.
        "AND endpoint_id IN (SELECT id FROM webhook_endpoints) ORDER BY coalesce(next_attempt_at, created_at) LIMIT ?3) RETURNING id",
    )
    .bind(new Date(now - OVERDUE_AFTER_MS).toISOString(), new Date(now).toISOString(), SWEEP_BATCH);
  let sent = 0;
  for (let batch = 0; batch < SWEEP_BATCHES; batch++) {
    const { results } = await mark.all<{ id: string }>();
    if (results.length > 0) await queue.sendBatch(results.map(({ id }) => ({ body: { deliveryId: id }, contentType: "json" as const })));
    sent += results.length;
    if (results.length < SWEEP_BATCH) break;
  }
  return sent;
}
