/**
 * A lane's delivery log (docs/design/order-events.md#lanes): first tries that went through, a block a row, and the
 * cursor in the newest block, so what went right costs one row written a flush, not rows a delivery.
 */

/** One delivered event: its sequence, when it was POSTed (Unix ms), the answer's status, its time and its start. */
export type LoggedDelivery = [seq: number, at: number, status: number, durationMs: number, response: string | null];

/** Entries a block holds at most: a block is rewritten whole at each flush, so it stays small. */
export const LOG_BLOCK_ENTRIES = 100;
/** Blocks one run looks at for its prune, oldest first: a run prunes a few blocks, never the whole log. */
const PRUNE_BLOCKS = 20;

export const LOG_DDL = `
CREATE TABLE IF NOT EXISTS delivery_log (
  after INTEGER PRIMARY KEY,
  through INTEGER NOT NULL,
  delivered INTEGER NOT NULL,
  last_at INTEGER NOT NULL,
  entries TEXT NOT NULL
);
`;

interface Block {
  after: number;
  through: number;
  delivered: number;
  last_at: number;
  entries: string;
}

const newest = (sql: SqlStorage) =>
  sql.exec("SELECT after, through, delivered, last_at FROM delivery_log ORDER BY after DESC LIMIT 1").toArray()[0] as
    | Omit<Block, "entries">
    | undefined;

/** The lane's cursor: the last event it is done with; undefined before its first flush. */
export const logCursor = (sql: SqlStorage): number | undefined => newest(sql)?.through;

/**
 * Appends delivered events (each after the cursor, at most `through`) and moves the cursor to `through`: one row
 * written, a new block's when the newest is full. `from` is the cursor before the lane's first block.
 */
export function appendToLog(sql: SqlStorage, entries: readonly LoggedDelivery[], from: number, through: number): void {
  const block = newest(sql);
  if (block !== undefined && block.through >= through && entries.length === 0) return;
  const added = JSON.stringify(entries);
  const lastAt = Math.max(block?.last_at ?? 0, ...entries.map((entry) => entry[1]));
  if (block === undefined || block.delivered + entries.length > LOG_BLOCK_ENTRIES) {
    sql.exec(
      "INSERT INTO delivery_log (after, through, delivered, last_at, entries) VALUES (?, ?, ?, ?, ?)",
      block?.through ?? from,
      through,
      entries.length,
      lastAt,
      added,
    );
    return;
  }
  sql.exec(
    "UPDATE delivery_log SET through = ?, delivered = delivered + ?, last_at = ?, entries = CASE WHEN ? = '[]' THEN " +
      "entries WHEN entries = '[]' THEN ? ELSE substr(entries, 1, length(entries) - 1) || ',' || substr(?, 2) END " +
      "WHERE after = ?",
    through,
    entries.length,
    lastAt,
    added,
    added,
    added,
    block.after,
  );
}

/**
 * How far a flush may move the cursor: to just before the first event whose try is not recorded yet (started, or read
 * and waiting), else as far as the feed was read. Past it, a lane that died would never send that event.
 */
export function cursorBefore(unrecorded: Iterable<number>, readThrough: number): number {
  let first = Number.POSITIVE_INFINITY;
  for (const seq of unrecorded) if (seq < first) first = seq;
  return first === Number.POSITIVE_INFINITY ? readThrough : first - 1;
}

const entriesOf = (rows: { entries: string }[]) => rows.flatMap((row) => JSON.parse(row.entries) as LoggedDelivery[]);

/** The newest logged deliveries, newest first, `limit` at most. */
export function newestLogged(sql: SqlStorage, limit: number): LoggedDelivery[] {
  const found: LoggedDelivery[] = [];
  for (const row of sql.exec<{ entries: string }>("SELECT entries FROM delivery_log ORDER BY after DESC")) {
    found.push(...entriesOf([row]).reverse());
    if (found.length >= limit) break;
  }
  return found.slice(0, limit);
}

/** One logged delivery, by its event; undefined when not logged (or pruned). */
export function loggedDelivery(sql: SqlStorage, seq: number): LoggedDelivery | undefined {
  const rows = sql
    .exec<{ entries: string }>("SELECT entries FROM delivery_log WHERE after < ? ORDER BY after DESC LIMIT 1", seq)
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
      "DELETE FROM delivery_log WHERE after IN (SELECT after FROM delivery_log WHERE after < (SELECT max(after) FROM " +
        "delivery_log) ORDER BY after LIMIT ?) AND last_at < ? RETURNING after",
      PRUNE_BLOCKS,
      before,
    )
    .toArray().length;
  sql.exec(
    "UPDATE delivery_log SET entries = '[]', delivered = 0 WHERE after = (SELECT max(after) FROM delivery_log) AND " +
      "delivered > 0 AND last_at < ?",
    before,
  );
  return deleted === PRUNE_BLOCKS;
}
