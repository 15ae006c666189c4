/**
 * A lane's pending deliveries with a row of their own (docs/design/order-events.md#lanes): an event whose first try did
 * not go through, one its owner retried or recovered, and each notice, with their attempts inline. Keyed by the
 * event's sequence (a notice's negated id), so an event handed twice makes one row; no other index, so a retry costs
 * one row written. Settled, a row leaves for the log (lane-settled.ts). Times are Unix ms.
 */
import { withAttempt, type LaneAttempt } from "./lane-attempts";
import type { SettledDelivery } from "./lane-settled";

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
  /** Oldest first. */
  attempt_log: LaneAttempt[];
}

/** Rows pending at most: past it a lane tries nothing new, so its rows are few enough to read without an index. */
export const PENDING_CAP = 1_000;

/** Events whose row settled before the cursor passed them (an owner's retry): the feed's read leaves them out. */
const SETTLED_AHEAD_DDL = "CREATE TABLE IF NOT EXISTS settled_ahead (seq INTEGER PRIMARY KEY);";

export const DELIVERIES_DDL = `
CREATE TABLE IF NOT EXISTS pending_deliveries (
  seq INTEGER PRIMARY KEY,
  attempts INTEGER NOT NULL DEFAULT 0,
  schedule_step INTEGER NOT NULL DEFAULT 0,
  last_status INTEGER,
  last_error TEXT,
  due_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  attempt_log TEXT NOT NULL DEFAULT '[]'
);
${SETTLED_AHEAD_DDL}
`;

const rows = (cursor: SqlStorageCursor<Record<string, SqlStorageValue>>): LaneDelivery[] =>
  cursor.toArray().map((row) => ({
    ...(row as unknown as LaneDelivery),
    outcome: "pending",
    attempt_log: JSON.parse(row.attempt_log as string) as LaneAttempt[],
  }));

/** Adds a pending delivery, due now, for each notice not already here (a notice's negated id); how many were added. */
export function addNotices(sql: SqlStorage, seqs: readonly number[], now: number): number {
  let added = 0;
  for (const seq of seqs)
    added += sql
      .exec(
        "INSERT OR IGNORE INTO pending_deliveries (seq, due_at, created_at, updated_at) VALUES (?, ?, ?, ?) " +
          "RETURNING seq",
        seq,
        now,
        now,
        now,
      )
      .toArray().length;
  return added;
}

/** A row for an event tried from the feed that did not go through, due again at `dueAt`: its schedule's first step. */
export function addTried(
  sql: SqlStorage,
  seq: number,
  attempt: LaneAttempt,
  dueAt: number,
  createdAt: number,
  now: number,
): void {
  sql.exec(
    "INSERT OR IGNORE INTO pending_deliveries (seq, attempts, schedule_step, last_status, last_error, due_at, " +
      "created_at, updated_at, attempt_log) VALUES (?, 1, 1, ?, ?, ?, ?, ?, ?)",
    seq,
    attempt[1],
    attempt[4],
    dueAt,
    createdAt,
    now,
    JSON.stringify([attempt]),
  );
}

/** An event its owner retried or recovered that has no row: pending, due now, afresh, with what it had before. */
export function addRetried(
  sql: SqlStorage,
  seq: number,
  before: Pick<SettledDelivery, "attempts" | "lastStatus" | "lastError" | "attemptLog"> | undefined,
  createdAt: number,
  now: number,
): LaneDelivery {
  return rows(
    sql.exec(
      "INSERT INTO pending_deliveries (seq, attempts, last_status, last_error, due_at, created_at, updated_at, " +
        "attempt_log) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?5, ?7) ON CONFLICT (seq) DO UPDATE SET schedule_step = 0, " +
        "due_at = ?5, updated_at = ?5 RETURNING *",
      seq,
      before?.attempts ?? 0,
      before?.lastStatus ?? null,
      before?.lastError ?? null,
      now,
      createdAt,
      JSON.stringify(before?.attemptLog ?? []),
    ),
  )[0]!;
}

export const pendingCount = (sql: SqlStorage): number =>
  sql.exec<{ n: number }>("SELECT count(*) AS n FROM pending_deliveries").one().n;

/** Pending deliveries due at `now`, oldest due first, leaving out those already in flight. */
export function dueDeliveries(
  sql: SqlStorage,
  now: number,
  limit: number,
  inFlight: readonly number[],
): LaneDelivery[] {
  return rows(
    sql.exec(
      "SELECT * FROM pending_deliveries WHERE due_at <= ? AND seq NOT IN (SELECT value FROM json_each(?)) ORDER BY " +
        "due_at, seq LIMIT ?",
      now,
      JSON.stringify(inFlight),
      limit,
    ),
  );
}

/** When the next pending delivery is due; null when none is pending. */
export function nextDueAt(sql: SqlStorage): number | null {
  return sql.exec<{ due: number | null }>("SELECT min(due_at) AS due FROM pending_deliveries").one().due;
}

/**
 * A fifo endpoint's line: the notices first, oldest first, then the order events in order. A notice's key is its
 * negated id.
 */
const PENDING_NOTICES = "SELECT * FROM pending_deliveries WHERE seq < 0 ORDER BY seq DESC LIMIT ?";
const PENDING_EVENTS = "SELECT * FROM pending_deliveries WHERE seq > 0 ORDER BY seq LIMIT ?";

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

/** Events from `first` to `last` a feed's read leaves out: a row pending, or (unless `pendingOnly`) settled ahead. */
export const keyedIn = (sql: SqlStorage, first: number, last: number, pendingOnly = false): Set<number> =>
  new Set(
    sql
      .exec<{ seq: number }>(
        "SELECT seq FROM pending_deliveries WHERE seq BETWEEN ?1 AND ?2 UNION ALL SELECT seq FROM settled_ahead " +
          "WHERE seq BETWEEN ?1 AND ?2 AND NOT ?3",
        first,
        last,
        pendingOnly ? 1 : 0,
      )
      .toArray()
      .map((row) => row.seq),
  );

export const passSettledAhead = (sql: SqlStorage, cursor: number): void =>
  void sql.exec("DELETE FROM settled_ahead WHERE seq <= ?", cursor);

export function deliveryOf(sql: SqlStorage, seq: number): LaneDelivery | undefined {
  return rows(sql.exec("SELECT * FROM pending_deliveries WHERE seq = ?", seq))[0];
}

/** What settles a pending row: its outcome, the attempt that settled it (if any), and why it failed. */
export interface Settle {
  seq: number;
  outcome: "delivered" | "failed";
  attempt?: LaneAttempt;
  error: string | null;
  /** The row's `updated_at` when its attempt began: a row changed since (an owner's retry) stays pending. */
  updatedAt: number;
}

const settledEntry = (
  row: LaneDelivery,
  change: Pick<Settle, "outcome" | "error"> & { attempt?: LaneAttempt },
  now: number,
): SettledDelivery => ({
  seq: row.seq,
  outcome: change.outcome,
  attempts: row.attempts + (change.attempt === undefined ? 0 : 1),
  lastStatus: change.attempt?.[1] ?? row.last_status,
  lastError: change.error,
  createdAt: row.created_at,
  settledAt: now,
  attemptLog: change.attempt === undefined ? row.attempt_log : withAttempt(row.attempt_log, change.attempt),
  ...(change.outcome === "failed" && change.attempt !== undefined ? { spent: true as const } : {}),
});

/** Takes out the rows settled, each if unchanged since its attempt began: entries for a flush to `cursor`. */
export function settledRows(
  sql: SqlStorage,
  settles: readonly Settle[],
  now: number,
  cursor: number,
): SettledDelivery[] {
  const entries: SettledDelivery[] = [];
  for (const settle of settles) {
    const [row] = rows(
      sql.exec(
        "DELETE FROM pending_deliveries WHERE seq = ? AND updated_at = ? RETURNING *",
        settle.seq,
        settle.updatedAt,
      ),
    );
    if (row !== undefined) entries.push(settledEntry(row, settle, now));
  }
  noteSettledAhead(
    sql,
    entries.map((entry) => entry.seq),
    cursor,
  );
  return entries;
}

/** Notes the events settled past `cursor`: the feed's read leaves them out until the cursor passes them. */
export function noteSettledAhead(sql: SqlStorage, seqs: readonly number[], cursor: number): void {
  for (const seq of seqs) if (seq > cursor) sql.exec("INSERT OR IGNORE INTO settled_ahead (seq) VALUES (?)", seq);
}

/**
 * A failed attempt with schedule left: the next is due at `dueAt`, unless something moved the delivery on meanwhile.
 */
export function scheduleRetry(
  sql: SqlStorage,
  delivery: Pick<LaneDelivery, "seq" | "updated_at" | "attempt_log">,
  attempt: LaneAttempt,
  dueAt: number,
  now: number,
): boolean {
  return (
    sql.exec(
      "UPDATE pending_deliveries SET attempts = attempts + 1, schedule_step = schedule_step + 1, last_status = ?, " +
        "last_error = ?, due_at = ?, updated_at = ?, attempt_log = ? WHERE seq = ? AND updated_at = ?",
      attempt[1],
      attempt[4],
      dueAt,
      now,
      JSON.stringify(withAttempt(delivery.attempt_log, attempt)),
      delivery.seq,
      delivery.updated_at,
    ).rowsWritten > 0
  );
}

/** Fails up to `limit` pending deliveries for one reason, but those `busy`: their entries, for one flush. */
export function failPending(
  sql: SqlStorage,
  reason: string,
  now: number,
  limit: number,
  busy: readonly number[] = [],
): SettledDelivery[] {
  const failed = rows(
    sql.exec(
      "DELETE FROM pending_deliveries WHERE seq IN (SELECT seq FROM pending_deliveries WHERE seq NOT IN (SELECT value " +
        "FROM json_each(?)) ORDER BY due_at, seq LIMIT ?) RETURNING *",
      JSON.stringify(busy),
      limit,
    ),
  );
  return failed.map((row) => settledEntry(row, { outcome: "failed", error: reason }, now));
}

/** The newest pending deliveries, newest first: the newest events' and notices', read by key, merged by when made. */
export function newestDeliveries(sql: SqlStorage, limit: number): LaneDelivery[] {
  const events = rows(sql.exec("SELECT * FROM pending_deliveries WHERE seq > 0 ORDER BY seq DESC LIMIT ?", limit));
  const notices = rows(sql.exec("SELECT * FROM pending_deliveries WHERE seq < 0 ORDER BY seq LIMIT ?", limit));
  if (notices.length === 0) return events;
  return [...events, ...notices]
    .sort((a, b) => b.created_at - a.created_at || Math.abs(b.seq) - Math.abs(a.seq))
    .slice(0, limit);
}

/** A pending delivery due now, its schedule afresh; undefined when none is pending for that event. */
export function resetDelivery(sql: SqlStorage, seq: number, now: number): LaneDelivery | undefined {
  return rows(
    sql.exec(
      "UPDATE pending_deliveries SET schedule_step = 0, due_at = ?, updated_at = ? WHERE seq = ? RETURNING *",
      now,
      now,
      seq,
    ),
  )[0];
}

export const pendingSeqs = (sql: SqlStorage): Set<number> =>
  new Set(
    sql
      .exec<{ seq: number }>("SELECT seq FROM pending_deliveries")
      .toArray()
      .map((row) => row.seq),
  );

/** Attempts since `since` of the pending rows. */
export const pendingAttemptsSince = (sql: SqlStorage, since: number): LaneAttempt[] =>
  sql
    .exec<{ value: string }>(
      "SELECT attempt.value FROM pending_deliveries, json_each(attempt_log) AS attempt WHERE " +
        "json_extract(attempt.value, '$[0]') >= ?1",
      since,
    )
    .toArray()
    .map((row) => JSON.parse(row.value) as LaneAttempt);

/** A lane at its cap that got through again: what it held waits no longer, so the feed behind it moves. */
export const releaseHeld = (sql: SqlStorage, now: number): number =>
  sql.exec("UPDATE pending_deliveries SET due_at = ?1 WHERE due_at > ?1", now).rowsWritten;
