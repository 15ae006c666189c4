/**
 * A lane's delivery log (docs/design/order-events.md#lanes), in blocks: the first tries that went through, what
 * settled (a row's last word, a range failed at once) and the cursor, so a flush writes one row whatever it records.
 */
import type { SettledDelivery } from "./lane-settled";

/** One delivered event: its sequence, when it was POSTed (Unix ms), the answer's status, its time and its start. */
export type LoggedDelivery = [seq: number, at: number, status: number, durationMs: number, response: string | null];

/** Entries of each kind a block holds at most: a block is rewritten whole at each flush, so it stays small. */
export const LOG_BLOCK_ENTRIES = 100;
/** Blocks one run looks at for its prune, oldest first: a run prunes a few blocks, never the whole log. */
const PRUNE_BLOCKS = 20;

export const LOG_DDL = `
CREATE TABLE IF NOT EXISTS delivery_log (
  id INTEGER PRIMARY KEY,
  after INTEGER,
  through INTEGER,
  delivered INTEGER NOT NULL,
  settled INTEGER NOT NULL,
  last_at INTEGER NOT NULL,
  settled_at INTEGER NOT NULL,
  entries TEXT NOT NULL,
  settled_entries TEXT NOT NULL
);
`;

const COLUMNS = "after, through, delivered, settled, last_at, settled_at, entries, settled_entries";

type Block = {
  id: number;
  through: number | null;
  delivered: number;
  settled: number;
  last_at: number;
  settled_at: number;
};

const newest = (sql: SqlStorage) =>
  sql
    .exec<Block>(
      "SELECT id, through, delivered, settled, last_at, settled_at FROM delivery_log ORDER BY id DESC LIMIT 1",
    )
    .toArray()[0];

/** The lane's cursor: the last event it is done with; undefined before its first. */
export const logCursor = (sql: SqlStorage): number | undefined => newest(sql)?.through ?? undefined;

/** What one flush records: first tries that went through (each after the cursor), settled entries, the cursor. */
export interface LogAppend {
  delivered?: readonly LoggedDelivery[];
  settled?: readonly SettledDelivery[];
  /** Where the cursor moves (never back); undefined leaves it. */
  through?: number;
  /** The cursor before the lane's first block. */
  from?: number;
}

/** Writes one flush: one row, a new block's when the newest is full (settled entries past a block take more). */
export function appendToLog(sql: SqlStorage, { delivered = [], settled = [], through, from }: LogAppend): void {
  let start = 0;
  for (; start + LOG_BLOCK_ENTRIES < settled.length; start += LOG_BLOCK_ENTRIES)
    appendBlock(sql, [], settled.slice(start, start + LOG_BLOCK_ENTRIES), undefined, from);
  appendBlock(sql, delivered, settled.slice(start), through, from);
}

const jsonAppend = (column: string, param: string) =>
  `CASE WHEN ${param} = '[]' THEN ${column} WHEN ${column} = '[]' THEN ${param} ELSE substr(${column}, 1, ` +
  `length(${column}) - 1) || ',' || substr(${param}, 2) END`;

function appendBlock(
  sql: SqlStorage,
  delivered: readonly LoggedDelivery[],
  settled: readonly SettledDelivery[],
  through: number | undefined,
  from: number | undefined,
): void {
  const block = newest(sql);
  const cursor = Math.max(through ?? Number.NEGATIVE_INFINITY, block?.through ?? Number.NEGATIVE_INFINITY);
  const moves = through !== undefined && cursor !== block?.through;
  if (!moves && delivered.length + settled.length === 0) return;
  const values = [
    Number.isFinite(cursor) ? cursor : null,
    delivered.length,
    settled.length,
    Math.max(block?.last_at ?? 0, ...delivered.map((entry) => entry[1])),
    Math.max(block?.settled_at ?? 0, ...settled.map((entry) => entry.settledAt)),
    JSON.stringify(delivered),
    JSON.stringify(settled),
  ];
  if (
    block === undefined ||
    block.delivered + delivered.length > LOG_BLOCK_ENTRIES ||
    block.settled + settled.length > LOG_BLOCK_ENTRIES
  ) {
    sql.exec(
      `INSERT INTO delivery_log (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      block?.through ?? from ?? null,
      ...values,
    );
    return;
  }
  sql.exec(
    "UPDATE delivery_log SET through = ?1, after = coalesce(after, ?9), delivered = delivered + ?2, settled = settled " +
      `+ ?3, last_at = ?4, settled_at = ?5, entries = ${jsonAppend("entries", "?6")}, settled_entries = ` +
      `${jsonAppend("settled_entries", "?7")} WHERE id = ?8`,
    ...values,
    block.id,
    from ?? null,
  );
}

/** Appends settled entries, the cursor where it is. */
export const appendSettled = (sql: SqlStorage, entries: readonly SettledDelivery[]): void =>
  appendToLog(sql, { settled: entries });

/**
 * How far a flush may move the cursor: to just before the first event whose try is not recorded yet (started, or read
 * and waiting), else as far as the feed was read. Past it, a lane that died would never send that event.
 */
export function cursorBefore(unrecorded: Iterable<number>, readThrough: number): number {
  let first = Number.POSITIVE_INFINITY;
  for (const seq of unrecorded) if (seq < first) first = seq;
  return first === Number.POSITIVE_INFINITY ? readThrough : first - 1;
}

/** Sequences a cursor may lag behind what its lane passed: the next read passes them again, a few rows read. */
export const CURSOR_LAG = 50;

/**
 * Whether a flush that records nothing may leave the cursor at `stood`, its read past it to `through`: a short span
 * where each event the run took, and each keyed, has a pending row, which keys it for the next read.
 */
export function cursorMayStay(
  stood: number,
  through: number,
  taken: Iterable<number>,
  keyed: ReadonlySet<number>,
  pending: ReadonlySet<number>,
): boolean {
  if (through <= stood || through - stood > CURSOR_LAG) return false;
  for (const seq of keyed) if (!pending.has(seq)) return false;
  for (const seq of taken) if (seq > stood && seq <= through && !pending.has(seq)) return false;
  return true;
}

const entriesOf = (rows: { entries: string }[]) => rows.flatMap((row) => JSON.parse(row.entries) as LoggedDelivery[]);

/** The newest logged deliveries, newest first, `limit` at most. */
export function newestLogged(sql: SqlStorage, limit: number): LoggedDelivery[] {
  const found: LoggedDelivery[] = [];
  for (const row of sql.exec<{ entries: string }>(
    "SELECT entries FROM delivery_log WHERE delivered > 0 ORDER BY id DESC",
  )) {
    found.push(...entriesOf([row]).reverse());
    if (found.length >= limit) break;
  }
  return found.slice(0, limit);
}

/** One logged delivery, by its event; undefined when not logged (or pruned). */
export function loggedDelivery(sql: SqlStorage, seq: number): LoggedDelivery | undefined {
  const rows = sql
    .exec<{ entries: string }>("SELECT entries FROM delivery_log WHERE after < ? ORDER BY id DESC LIMIT 1", seq)
    .toArray();
  return entriesOf(rows).find((entry) => entry[0] === seq);
}

/** When the newest logged delivery was POSTed; null when none is. */
export const lastLoggedAt = (sql: SqlStorage): number | null => {
  const block = newest(sql);
  return block === undefined || block.last_at === 0 ? null : block.last_at;
};

/** Deletes blocks older than `before` (the newest, with the cursor, is emptied instead); whether it filled a batch. */
export function pruneLog(sql: SqlStorage, before: number): boolean {
  const deleted = sql
    .exec(
      "DELETE FROM delivery_log WHERE id IN (SELECT id FROM delivery_log WHERE id < (SELECT max(id) FROM " +
        "delivery_log) ORDER BY id LIMIT ?) AND max(last_at, settled_at) < ? RETURNING id",
      PRUNE_BLOCKS,
      before,
    )
    .toArray().length;
  const emptied = (at: string, column: string, empty: string) =>
    `${column} = CASE WHEN ${at} < ?1 THEN ${empty} ELSE ${column} END`;
  sql.exec(
    `UPDATE delivery_log SET ${emptied("last_at", "entries", "'[]'")}, ${emptied("last_at", "delivered", "0")}, ` +
      `${emptied("settled_at", "settled_entries", "'[]'")}, ${emptied("settled_at", "settled", "0")} ` +
      "WHERE id = (SELECT max(id) FROM delivery_log) AND ((delivered > 0 AND last_at < ?1) OR (settled > 0 AND " +
      "settled_at < ?1))",
    before,
  );
  return deleted === PRUNE_BLOCKS;
}
