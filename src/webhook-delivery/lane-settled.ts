/**
 * What a lane's log holds of what settled (docs/design/order-events.md#lanes): each row that settled, and each range of
 * events failed at once, an entry in the log's blocks in the order they settled, written with the run's flush.
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

/** Each delivery's newest entry, newest settled first, a block at a time while `wanted` asks for more. */
export function readSettled(
  sql: SqlStorage,
  wanted: (found: readonly SettledDelivery[], blockLastAt: number) => boolean,
): SettledDelivery[] {
  const found: SettledDelivery[] = [];
  // A range is keyed apart from its last event's own entry: ranges never overlap, an event and a range may.
  const seen = new Set<string>();
  // Each block's times are at least its elders' (lane-log.ts), so any block, settled or not, can end the scan.
  for (const block of sql.exec<{ settled: number; last_at: number; entries: string }>(
    "SELECT settled, max(last_at, settled_at) AS last_at, settled_entries AS entries FROM delivery_log ORDER BY id DESC",
  )) {
    if (!wanted(found, block.last_at)) break;
    if (block.settled === 0) continue;
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
