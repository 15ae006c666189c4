/** A lane's attempts (docs/api.md#webhook-endpoints): each POST with its answer, pruned with the deliveries. */

export interface LaneAttempt {
  seq: number;
  at: number;
  status: number | null;
  duration_ms: number;
  response: string | null;
  error: string | null;
}

export const ATTEMPTS_DDL = `
CREATE TABLE IF NOT EXISTS attempts (
  id INTEGER PRIMARY KEY,
  seq INTEGER NOT NULL,
  at INTEGER NOT NULL,
  status INTEGER,
  duration_ms INTEGER NOT NULL,
  response TEXT,
  error TEXT
);
CREATE INDEX IF NOT EXISTS attempts_by_delivery ON attempts (seq, id);
CREATE INDEX IF NOT EXISTS attempts_by_age ON attempts (at);
`;

export function recordAttempt(sql: SqlStorage, attempt: LaneAttempt): void {
  sql.exec(
    "INSERT INTO attempts (seq, at, status, duration_ms, response, error) VALUES (?, ?, ?, ?, ?, ?)",
    attempt.seq,
    attempt.at,
    attempt.status,
    attempt.duration_ms,
    attempt.response,
    attempt.error,
  );
}

/** The newest attempts of each delivery named, newest first, `each` at most per delivery. */
export function attemptsOf(sql: SqlStorage, seqs: readonly number[], each: number): Map<number, LaneAttempt[]> {
  const found = sql
    .exec(
      "SELECT seq, at, status, duration_ms, response, error FROM attempts WHERE seq IN (SELECT value FROM " +
        "json_each(?)) ORDER BY id DESC",
      JSON.stringify(seqs),
    )
    .toArray() as unknown as LaneAttempt[];
  const bySeq = new Map<number, LaneAttempt[]>();
  for (const attempt of found) {
    const list = bySeq.get(attempt.seq) ?? [];
    if (list.length < each) list.push(attempt);
    bySeq.set(attempt.seq, list);
  }
  return bySeq;
}

/** Deletes up to `limit` attempts made before `before`, oldest first; how many. */
export function pruneAttempts(sql: SqlStorage, before: number, limit: number): number {
  return sql
    .exec(
      "DELETE FROM attempts WHERE id IN (SELECT id FROM attempts WHERE at < ? ORDER BY at LIMIT ?) RETURNING id",
      before,
      limit,
    )
    .toArray().length;
}

/** Attempts since `since` that were refused or never answered: what disabling a failing endpoint asks for. */
export function failedAttemptsSince(sql: SqlStorage, since: number): number {
  const [row] = sql
    .exec<{ failed: number }>(
      "SELECT count(*) AS failed FROM attempts WHERE at >= ? AND (status IS NULL OR status NOT BETWEEN 200 AND 299)",
      since,
    )
    .toArray();
  return row?.failed ?? 0;
}

/** When the newest attempt since `since` that the receiver took was made; null when none was. */
export function lastSuccessSince(sql: SqlStorage, since: number): number | null {
  const [row] = sql
    .exec<{ at: number | null }>(
      "SELECT max(at) AS at FROM attempts WHERE at >= ? AND status BETWEEN 200 AND 299",
      since,
    )
    .toArray();
  return row?.at ?? null;
}
