/**
 * A lane's settled log (docs/design/order-events.md#lanes): each row that settled, and each range of events failed at
 * once, an entry in blocks kept in the order they settled, so a settle costs one row written and a prune one a block.
 */
import { tookIt, type LaneAttempt } from "./lane-attempts";

export interface SettledDelivery {
  /** The event's sequence (a notice's negated id); for a range, its last event. */
  seq: number;
  /** A range's sequence before its first event: every event the endpoint wanted in (after, seq] failed at once. */
  after?: number;
  outcome: "delivered" | "failed";
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: number;
  settledAt: number;
  attemptLog: LaneAttempt[];
  /** Settled failed by an attempt: its schedule spent. */
  spent?: true;
}

/** The entry for every event the endpoint wanted in (after, through], failed at once for `reason`. */
export const failedRange = (
  after: number,
  through: number,
  reason: string,
  createdAt: number,
  now: number,
): SettledDelivery => ({
  seq: through,
  after,
  outcome: "failed",
  attempts: 0,
  lastStatus: null,
  lastError: reason,
  createdAt,
  settledAt: now,
  attemptLog: [],
});

/** Entries a block holds at most: a block is rewritten whole at each settle, so it stays small. */
export const SETTLED_BLOCK_ENTRIES = 100;
const PRUNE_BLOCKS = 20;

export const SETTLED_DDL = `
CREATE TABLE IF NOT EXISTS settled_log (
  id INTEGER PRIMARY KEY,
  settled INTEGER NOT NULL,
  last_at INTEGER NOT NULL,
  entries TEXT NOT NULL
);
`;

/** Appends entries to the newest block, or to a new one when it is full: one row written a block. */
export function appendSettled(sql: SqlStorage, entries: readonly SettledDelivery[]): void {
  for (let from = 0; from < entries.length; from += SETTLED_BLOCK_ENTRIES)
    appendBlock(sql, entries.slice(from, from + SETTLED_BLOCK_ENTRIES));
}

function appendBlock(sql: SqlStorage, entries: readonly SettledDelivery[]): void {
  const [block] = sql
    .exec<{ id: number; settled: number }>("SELECT id, settled FROM settled_log ORDER BY id DESC LIMIT 1")
    .toArray();
  const added = JSON.stringify(entries);
  const lastAt = Math.max(...entries.map((entry) => entry.settledAt));
  if (block === undefined || block.settled + entries.length > SETTLED_BLOCK_ENTRIES) {
    sql.exec("INSERT INTO settled_log (settled, last_at, entries) VALUES (?, ?, ?)", entries.length, lastAt, added);
    return;
  }
  sql.exec(
    "UPDATE settled_log SET settled = settled + ?, last_at = max(last_at, ?), entries = substr(entries, 1, " +
      "length(entries) - 1) || ',' || substr(?, 2) WHERE id = ?",
    entries.length,
    lastAt,
    added,
    block.id,
  );
}

/** Each delivery's newest entry, newest settled first, a block at a time while `wanted` asks for more. */
export function readSettled(
  sql: SqlStorage,
  wanted: (found: readonly SettledDelivery[], blockLastAt: number) => boolean,
): SettledDelivery[] {
  const found: SettledDelivery[] = [];
  // A range is keyed apart from its last event's own entry: ranges never overlap, an event and a range may.
  const seen = new Set<string>();
  for (const block of sql.exec<{ last_at: number; entries: string }>(
    "SELECT last_at, entries FROM settled_log ORDER BY id DESC",
  )) {
    if (!wanted(found, block.last_at)) break;
    for (const entry of (JSON.parse(block.entries) as SettledDelivery[]).reverse()) {
      const key = entry.after === undefined ? String(entry.seq) : `range ${entry.seq}`;
      if (seen.has(key)) continue;
      seen.add(key);
      found.push(entry);
    }
  }
  return found;
}

/** The newest settled deliveries by event: read until an older block could hold none newer (settled after made). */
export function newestSettled(sql: SqlStorage, limit: number): SettledDelivery[] {
  const newestFirst = (a: SettledDelivery, b: SettledDelivery) => b.createdAt - a.createdAt || b.seq - a.seq;
  const found = readSettled(
    sql,
    (entries, lastAt) => entries.length < limit || [...entries].sort(newestFirst)[limit - 1]!.createdAt <= lastAt,
  );
  return found.sort(newestFirst).slice(0, limit);
}

/** The newest settled entry for the event `seq`, its own or a range's that holds it. */
export function settledOf(sql: SqlStorage, seq: number): SettledDelivery | undefined {
  return readSettled(sql, () => true).find(
    (entry) => entry.seq === seq || (entry.after !== undefined && seq > entry.after && seq <= entry.seq),
  );
}

/** Failed entries of deliveries made since `since`, newest settled first; a range's if it failed since then. */
export const failedSince = (sql: SqlStorage, since: number): SettledDelivery[] =>
  readSettled(sql, (_, lastAt) => lastAt >= since).filter((entry) =>
    entry.after === undefined
      ? entry.outcome === "failed" && entry.createdAt >= since
      : entry.outcome === "failed" && entry.after < entry.seq && entry.settledAt >= since,
  );

/** Attempts since `since`, but those of deliveries in `pending`: a row made pending again carries its attempts. */
const attemptsOf = (entries: readonly SettledDelivery[], since: number, pending: ReadonlySet<number>) =>
  entries
    .filter((entry) => !pending.has(entry.seq))
    .flatMap((entry) => entry.attemptLog)
    .filter((attempt) => attempt[0] >= since);

/** The events with a settled entry of their own (not a range's). */
export const ownSettled = (sql: SqlStorage): number[] =>
  readSettled(sql, () => true)
    .filter((entry) => entry.after === undefined)
    .map((entry) => entry.seq);

/** The attempts of the deliveries whose schedule an attempt since `since` spent (a run's own: the newest blocks). */
export const spentSince = (sql: SqlStorage, since: number): LaneAttempt[] =>
  readSettled(sql, (_, lastAt) => lastAt >= since)
    .filter((entry) => entry.spent && entry.settledAt >= since)
    .flatMap((entry) => entry.attemptLog);

/** Attempts since `since` that were refused or never answered, counted up to `enough`. */
export function failedAttemptsSince(
  sql: SqlStorage,
  since: number,
  enough: number,
  pending: ReadonlySet<number>,
): number {
  const failed = (entries: readonly SettledDelivery[]) =>
    attemptsOf(entries, since, pending).filter((attempt) => !tookIt(attempt)).length;
  return failed(readSettled(sql, (entries, lastAt) => lastAt >= since && failed(entries) < enough));
}

/** When the newest attempt since `since` that a receiver took was made; null when none was. */
export function lastSuccessSince(sql: SqlStorage, since: number, pending: ReadonlySet<number>): number | null {
  const taken = (entries: readonly SettledDelivery[]) =>
    attemptsOf(entries, since, pending)
      .filter(tookIt)
      .map((attempt) => attempt[0]);
  const found = taken(readSettled(sql, (entries, lastAt) => lastAt >= since && taken(entries).length === 0));
  return found.length === 0 ? null : Math.max(...found);
}

/** Deletes blocks whose every entry settled before `before`, oldest first; whether it stopped at its batch. */
export function pruneSettled(sql: SqlStorage, before: number): boolean {
  const deleted = sql
    .exec(
      "DELETE FROM settled_log WHERE id IN (SELECT id FROM settled_log ORDER BY id LIMIT ?) AND last_at < ? " +
        "RETURNING id",
      PRUNE_BLOCKS,
      before,
    )
    .toArray().length;
  return deleted === PRUNE_BLOCKS;
}
