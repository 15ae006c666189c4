/**
 * Order events are kept 30 days and within a storage budget, whichever keeps fewer
 * (docs/design/order-events.md#retention): every minute the cron deletes the oldest, a bounded number of batches a run,
 * and moves the feed's expiry mark in the same transaction as each delete.
 */
import type { D1Queryable } from "../lib/d1-session";
import { logLine } from "../lib/log";

export const EVENT_RETENTION_MS = 30 * 86_400_000;
/** Events one statement deletes. */
export const PRUNE_BATCH = 5_000;
/** Batches one run deletes at most: a read and two statements each, 120 queries a run. */
export const PRUNE_BATCHES_PER_RUN = 40;
/** What an event costs the database, indexes included (test/workers/events/event-storage.test.ts keeps it true). */
export const EVENT_ROW_BYTES = 400;
/** The share of its budget at which the prune warns an operator. */
export const BUDGET_WARNING_SHARE = 0.8;

export interface EventStorage {
  /** The newest event's sequence. */
  head: number;
  /** Every event up to here is deleted. */
  prunedThrough: number;
  /** Events kept, at most (the sequence can have gaps, so no fewer are). */
  rows: number;
  bytes: number;
  budgetBytes: number;
}

export async function eventStorage(db: D1Queryable, budgetBytes: number): Promise<EventStorage> {
  const row = await db
    .prepare(
      "SELECT (SELECT coalesce(max(seq), 0) FROM order_events) AS head, (SELECT pruned_through FROM " +
        "order_event_retention WHERE id = 1) AS pruned",
    )
    .first<{ head: number; pruned: number }>();
  const rows = Math.max(0, row!.head - row!.pruned);
  return { head: row!.head, prunedThrough: row!.pruned, rows, bytes: rows * EVENT_ROW_BYTES, budgetBytes };
}

/** What one run reads and deletes, apart from D1, for test/node/logic/prune-month-simulation.test.ts. */
export interface PruneSteps {
  /** The last of the (at most PRUNE_BATCH) events after `from` created before the cutoff; null when none is. */
  oldThrough(from: number): Promise<number | null>;
  /** Deletes the events after `from` up to `through`, moving the mark in the same transaction; how many went. */
  remove(from: number, through: number): Promise<number>;
}

/** One run's batches, oldest first, past the retention or over the budget; how many went. */
export async function pruneBatches(
  storage: Pick<EventStorage, "head" | "prunedThrough" | "budgetBytes">,
  steps: PruneSteps,
): Promise<number> {
  const overBudgetThrough = storage.head - Math.floor(storage.budgetBytes / EVENT_ROW_BYTES);
  let deleted = 0;
  let from = storage.prunedThrough;
  for (let batch = 0; batch < PRUNE_BATCHES_PER_RUN; batch++) {
    const old = await steps.oldThrough(from);
    const through = Math.max(old ?? from, Math.min(overBudgetThrough, from + PRUNE_BATCH));
    if (through <= from) break;
    deleted += await steps.remove(from, through);
    from = through;
  }
  return deleted;
}

/** Deletes, oldest first, what is past the retention at `now` (Unix ms) or over the budget; returns how many. */
export async function pruneOrderEvents(db: D1Queryable, now: number, budgetBytes: number): Promise<number> {
  const storage = await eventStorage(db, budgetBytes);
  if (storage.bytes >= storage.budgetBytes * BUDGET_WARNING_SHARE) {
    logLine(
      "warn",
      "order-events-prune",
      "the order events are near their storage budget: older events are pruned to stay under it, and the " +
        "feed reaches " +
        "back less far",
      {
        bytes: storage.bytes,
        budgetBytes: storage.budgetBytes,
      },
    );
  }
  // created_at's text order is time order and the sequence follows it, so each look reads the next batch by key (by
  // created_at alone, a run with nothing old would read every event).
  const oldThrough = db.prepare(
    "SELECT max(seq) AS through FROM (SELECT seq, created_at FROM order_events WHERE seq > ?1 ORDER BY seq LIMIT ?2) " +
      "WHERE created_at < ?3",
  );
  const cutoff = new Date(now - EVENT_RETENTION_MS).toISOString();
  return pruneBatches(storage, {
    oldThrough: (from) => oldThrough.bind(from, PRUNE_BATCH, cutoff).first<number | null>("through"),
    async remove(from, through) {
      // Everything up to the batch's last event goes, so the mark says exactly what is gone.
      const [, deletion] = await db.batch([
        db
          .prepare("UPDATE order_event_retention SET pruned_through = max(pruned_through, ?1) WHERE id = 1")
          .bind(through),
        db.prepare("DELETE FROM order_events WHERE seq > ?1 AND seq <= ?2").bind(from, through),
      ]);
      return deletion!.meta.changes;
    },
  });
}
