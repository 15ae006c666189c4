/**
 * A lane's deliveries with a row of their own (docs/design/order-events.md#lanes): an event whose first try did not go
 * through, one its owner retried, and each notice. Keyed by the event's sequence (a notice's negated id), so an event
 * handed twice makes one row. Times are Unix ms. Events delivered at their first try are in the log (lane-log.ts).
 */

export interface LaneDelivery {
  seq: number;
  outcome: "pending" | "delivered" | "failed";
  attempts: number;
  /** The receiver's answers counted against the retry schedule (a manual retry starts it again). */
  schedule_step: number;
  last_status: number | null;
  last_error: string | null;
  /** When the next attempt is due; null once settled. */
  due_at: number | null;
  created_at: number;
  updated_at: number;
}

export const DELIVERIES_DDL = `
CREATE TABLE IF NOT EXISTS deliveries (
  seq INTEGER PRIMARY KEY,
  outcome TEXT NOT NULL CHECK (outcome IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  schedule_step INTEGER NOT NULL DEFAULT 0,
  last_status INTEGER,
  last_error TEXT,
  due_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (due_at, seq) WHERE outcome = 'pending';
CREATE INDEX IF NOT EXISTS deliveries_settled ON deliveries (updated_at) WHERE outcome <> 'pending';
CREATE INDEX IF NOT EXISTS deliveries_pending ON deliveries (seq) WHERE outcome = 'pending';
`;

const rows = (cursor: SqlStorageCursor<Record<string, SqlStorageValue>>) =>
  cursor.toArray() as unknown as LaneDelivery[];

/** Adds a pending delivery, due now, for each event not already here; how many were added. */
export function addDeliveries(sql: SqlStorage, seqs: readonly number[], now: number): number {
  let added = 0;
  for (const seq of seqs)
    added += sql
      .exec(
        "INSERT OR IGNORE INTO deliveries (seq, outcome, due_at, created_at, updated_at) VALUES (?, 'pending', ?, ?, " +
          "?) RETURNING seq",
        seq,
        now,
        now,
        now,
      )
      .toArray().length;
  return added;
}

/**
 * A row for an event tried from the feed that did not go through: due again at `dueAt`, or failed (`dueAt` null).
 * The first attempt is its schedule's first step.
 */
export function addTried(
  sql: SqlStorage,
  seq: number,
  tried: { status: number | null; error: string; dueAt: number | null },
  createdAt: number,
  now: number,
): void {
  sql.exec(
    "INSERT OR IGNORE INTO deliveries (seq, outcome, attempts, schedule_step, last_status, last_error, due_at, " +
      "created_at, updated_at) VALUES (?, ?, 1, 1, ?, ?, ?, ?, ?)",
    seq,
    tried.dueAt === null ? "failed" : "pending",
    tried.status,
    tried.error,
    tried.dueAt,
    createdAt,
    now,
  );
}

/**
 * A row for an event its owner retried that had none (delivered at its first try, whose answer is kept, or not tried
 * yet): pending, due now, its schedule afresh.
 */
export function addRetried(
  sql: SqlStorage,
  seq: number,
  delivered: number | undefined,
  createdAt: number,
  now: number,
): LaneDelivery {
  return rows(
    sql.exec(
      "INSERT INTO deliveries (seq, outcome, attempts, schedule_step, last_status, due_at, created_at, updated_at) " +
        "VALUES (?1, 'pending', ?2, 0, ?3, ?4, ?5, ?6) ON CONFLICT (seq) DO UPDATE SET outcome = 'pending', " +
        "schedule_step = 0, due_at = ?4, updated_at = ?6 RETURNING *",
      seq,
      delivered === undefined ? 0 : 1,
      delivered ?? null,
      now,
      createdAt,
      now,
    ),
  )[0]!;
}

/** Pending deliveries due at `now`, oldest due first, leaving out those already in flight. */
export function dueDeliveries(
  sql: SqlStorage,
  now: number,
  limit: number,
  inFlight: readonly number[],
): LaneDelivery[] {
  return rows(
    sql.exec(
      "SELECT * FROM deliveries WHERE outcome = 'pending' AND due_at <= ? AND seq NOT IN (SELECT value FROM " +
        "json_each(?)) ORDER BY due_at, seq LIMIT ?",
      now,
      JSON.stringify(inFlight),
      limit,
    ),
  );
}

/** When the next pending delivery is due; null when none is pending. */
export function nextDueAt(sql: SqlStorage): number | null {
  const [row] = sql
    .exec<{ due: number | null }>("SELECT min(due_at) AS due FROM deliveries WHERE outcome = 'pending'")
    .toArray();
  return row?.due ?? null;
}

/**
 * A fifo endpoint's line: the notices first, oldest first, then the order events in order. A notice's key is its
 * negated id.
 */
const PENDING_NOTICES = "SELECT * FROM deliveries WHERE outcome = 'pending' AND seq < 0 ORDER BY seq DESC LIMIT ?";
const PENDING_EVENTS = "SELECT * FROM deliveries WHERE outcome = 'pending' AND seq > 0 ORDER BY seq LIMIT ?";

/** Whether the delivery keyed `seq` comes after `head` in a fifo endpoint's line. */
export const behindInLine = (seq: number, head: number) =>
  seq < 0 === head < 0 ? Math.abs(seq) > Math.abs(head) : head < 0;

/** A fifo endpoint's next delivery: the first pending in its line, due or not (its retry holds the rest). */
export function headOfLine(sql: SqlStorage): LaneDelivery | undefined {
  return rows(sql.exec(PENDING_NOTICES, 1))[0] ?? rows(sql.exec(PENDING_EVENTS, 1))[0];
}

/** A fifo endpoint's pending deliveries that are due, in its line's order, up to the first that is not. */
export function dueInOrder(sql: SqlStorage, now: number, limit: number, inFlight: readonly number[]): LaneDelivery[] {
  const due: LaneDelivery[] = [];
  const read = limit + inFlight.length;
  for (const row of [...rows(sql.exec(PENDING_NOTICES, read)), ...rows(sql.exec(PENDING_EVENTS, read))]) {
    if (inFlight.includes(row.seq)) continue;
    if (row.due_at === null || row.due_at > now || due.length >= limit) break;
    due.push(row);
  }
  return due;
}

export function deliveryOf(sql: SqlStorage, seq: number): LaneDelivery | undefined {
  return rows(sql.exec("SELECT * FROM deliveries WHERE seq = ?", seq))[0];
}

/**
 * Settles a delivery only if still pending, so an attempt that finished late never overrides a retry or a disabling.
 * Whether it did.
 */
export function settleDelivery(
  sql: SqlStorage,
  seq: number,
  outcome: "delivered" | "failed",
  attempt: { status: number | null; error: string | null; counts: boolean },
  now: number,
): boolean {
  return (
    sql.exec(
      "UPDATE deliveries SET outcome = ?, attempts = attempts + ?, last_status = coalesce(?, " +
        "last_status), last_error " +
        "= ?, due_at = NULL, updated_at = ? WHERE seq = ? AND outcome = 'pending'",
      outcome,
      attempt.counts ? 1 : 0,
      attempt.status,
      attempt.error,
      now,
      seq,
    ).rowsWritten > 0
  );
}

/**
 * A failed attempt with schedule left: the next is due at `dueAt`, unless something moved the delivery on meanwhile.
 */
export function scheduleRetry(
  sql: SqlStorage,
  delivery: Pick<LaneDelivery, "seq" | "schedule_step">,
  attempt: { status: number | null; error: string },
  dueAt: number,
  now: number,
): boolean {
  return (
    sql.exec(
      "UPDATE deliveries SET attempts = attempts + 1, schedule_step = schedule_step + 1, last_status = ?, last_error " +
        "= ?, due_at = ?, updated_at = ? WHERE seq = ? AND outcome = 'pending' AND schedule_step = ?",
      attempt.status,
      attempt.error,
      dueAt,
      now,
      delivery.seq,
      delivery.schedule_step,
    ).rowsWritten > 0
  );
}

/** Fails up to `limit` pending deliveries for one reason; how many. */
export function failPending(sql: SqlStorage, reason: string, now: number, limit: number): number {
  return sql
    .exec(
      "UPDATE deliveries SET outcome = 'failed', last_error = ?, due_at = NULL, updated_at = ? WHERE seq IN (SELECT " +
        "seq FROM deliveries WHERE outcome = 'pending' ORDER BY due_at, seq LIMIT ?) RETURNING seq",
      reason,
      now,
      limit,
    )
    .toArray().length;
}

/** The newest deliveries, newest first: the newest events' and notices', each read by key, merged by when made. */
export function newestDeliveries(sql: SqlStorage, limit: number): LaneDelivery[] {
  const events = rows(sql.exec("SELECT * FROM deliveries WHERE seq > 0 ORDER BY seq DESC LIMIT ?", limit));
  const notices = rows(sql.exec("SELECT * FROM deliveries WHERE seq < 0 ORDER BY seq LIMIT ?", limit));
  if (notices.length === 0) return events;
  return [...events, ...notices]
    .sort((a, b) => b.created_at - a.created_at || Math.abs(b.seq) - Math.abs(a.seq))
    .slice(0, limit);
}

/** A delivery made pending again, due now, its schedule afresh; undefined when there is none for that event. */
export function resetDelivery(sql: SqlStorage, seq: number, now: number): LaneDelivery | undefined {
  return rows(
    sql.exec(
      "UPDATE deliveries SET outcome = 'pending', schedule_step = 0, due_at = ?, updated_at = ? WHERE seq = ? " +
        "RETURNING *",
      now,
      now,
      seq,
    ),
  )[0];
}

/** Up to `limit` failed deliveries made since `since` made pending again, due now, in event order; how many. */
export function recoverFailed(sql: SqlStorage, since: number, now: number, limit: number): number {
  return sql
    .exec(
      "UPDATE deliveries SET outcome = 'pending', schedule_step = 0, due_at = ?, updated_at = ? WHERE seq IN (SELECT " +
        "seq FROM deliveries WHERE outcome = 'failed' AND created_at >= ? ORDER BY seq LIMIT ?) RETURNING seq",
      now,
      now,
      since,
      limit,
    )
    .toArray().length;
}

/** Whether any failed delivery made since `since` is left. */
export function failedSince(sql: SqlStorage, since: number): boolean {
  return (
    sql.exec("SELECT 1 FROM deliveries WHERE outcome = 'failed' AND created_at >= ? LIMIT 1", since).toArray().length >
    0
  );
}

/** Deletes up to `limit` settled deliveries last changed before `before`, oldest events first; how many. */
export function pruneSettled(sql: SqlStorage, before: number, limit: number): number {
  // Through the settled ones' index: a lane with nothing old to prune reads nothing.
  return sql
    .exec(
      "DELETE FROM deliveries WHERE seq IN (SELECT seq FROM deliveries WHERE outcome <> 'pending' AND updated_at < ? " +
        "ORDER BY updated_at LIMIT ?) RETURNING seq",
      before,
      limit,
    )
    .toArray().length;
}
