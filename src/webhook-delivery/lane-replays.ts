/**
 * A lane's replays (docs/design/order-events.md#lanes): a failed range its owner recovered, one row whatever its
 * length. Every event the endpoint wants in (after, seq] is due again, oldest first, but those in `skip` (with a row
 * of their own); a run tries them as it tries the feed's, and moves `after` as it records them.
 */

export interface Replay {
  seq: number;
  after: number;
  skip: number[];
  /** When the range's first event was made (Unix ms): a range failed again keeps it, for `recover`'s `since`. */
  created_at: number;
}

export const REPLAYS_DDL = `
CREATE TABLE IF NOT EXISTS replays (
  seq INTEGER PRIMARY KEY,
  after INTEGER NOT NULL,
  skip TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
`;

const replaysOf = (cursor: SqlStorageCursor<Record<string, SqlStorageValue>>): Replay[] =>
  cursor.toArray().map((row) => ({ ...(row as unknown as Replay), skip: JSON.parse(row.skip as string) as number[] }));

export function addReplay(
  sql: SqlStorage,
  after: number,
  seq: number,
  skip: readonly number[],
  createdAt: number,
): void {
  sql.exec(
    "INSERT OR REPLACE INTO replays (seq, after, skip, created_at) VALUES (?, ?, ?, ?)",
    seq,
    after,
    JSON.stringify(skip.filter((each) => each > after && each <= seq)),
    createdAt,
  );
}

/** An event a replay holds that got a row of its own (an owner's retry): the replay leaves it to that row. */
export const leaveToRow = (sql: SqlStorage, seq: number): void =>
  void sql.exec("UPDATE replays SET skip = json_insert(skip, '$[#]', ?1) WHERE after < ?1 AND seq >= ?1", seq);

/** The replays, oldest range first. */
export const replays = (sql: SqlStorage): Replay[] => replaysOf(sql.exec("SELECT * FROM replays ORDER BY seq"));

/** Whether the replay has the event `seq` still to send, or being sent. */
export const inReplay = (replay: Replay, seq: number): boolean =>
  seq > replay.after && seq <= replay.seq && !replay.skip.includes(seq);

/** Records a replay's events tried up to `after`: it ends once they all are. */
export function moveReplay(sql: SqlStorage, seq: number, after: number): void {
  if (after >= seq) sql.exec("DELETE FROM replays WHERE seq = ?", seq);
  else sql.exec("UPDATE replays SET after = ? WHERE seq = ? AND after < ?", after, seq, after);
}

/** Ends every replay: the ranges (after, through] it had left to send, around those it leaves out, and when made. */
export function endReplays(sql: SqlStorage): [after: number, through: number, createdAt: number][] {
  const ranges: [number, number, number][] = [];
  for (const replay of replaysOf(sql.exec("DELETE FROM replays RETURNING *"))) {
    let after = replay.after;
    for (const skipped of [...replay.skip.filter((seq) => seq > after), replay.seq + 1].sort((a, b) => a - b)) {
      if (skipped - 1 > after) ranges.push([after, skipped - 1, replay.created_at]);
      after = skipped;
    }
  }
  return ranges;
}
