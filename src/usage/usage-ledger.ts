/**
 * A budget's usage history in its limiter object's SQLite storage
 * (docs/design/rate-limits.md#usage-history): admitted and refused counts per
 * minute, kept 48 hours, and per day, kept 400 days. Written in the same
 * call as the decision it counts, so the history and the limiter never
 * disagree; hours are read as sums of minutes.
 */
import type { UsageChange } from "./usage-change";
import { BUCKET_SECONDS, KEPT_SECONDS, type UsageQuery, type UsageRow } from "./usage-query";

const TABLES = {
  minute: "usage_minutes",
  day: "usage_days",
} as const;

export class UsageLedger {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    for (const table of Object.values(TABLES)) {
      sql.exec(`CREATE TABLE IF NOT EXISTS ${table} (start INTEGER PRIMARY KEY, admitted INTEGER NOT NULL, refused INTEGER NOT NULL)`);
    }
  }

  /** Adds the changes, summed per bucket first (one write per bucket). */
  record(changes: readonly UsageChange[]): void {
    for (const [table, key] of [[TABLES.minute, "minuteStart"], [TABLES.day, "dayStart"]] as const) {
      const sums = new Map<number, { admitted: number; refused: number }>();
      for (const change of changes) {
        const sum = sums.get(change[key]) ?? { admitted: 0, refused: 0 };
        sum.admitted += change.admitted;
        sum.refused += change.refused;
        sums.set(change[key], sum);
      }
      for (const [start, { admitted, refused }] of sums) {
        if (admitted === 0 && refused === 0) continue;
        this.#sql.exec(
          `INSERT INTO ${table} (start, admitted, refused) VALUES (?, ?, ?) ` +
            "ON CONFLICT (start) DO UPDATE SET admitted = admitted + excluded.admitted, refused = refused + excluded.refused",
          start,
          admitted,
          refused,
        );
      }
    }
  }

  /** The non-empty buckets of the query's range. */
  read(query: UsageQuery): UsageRow[] {
    const table = query.granularity === "day" ? TABLES.day : TABLES.minute;
    const size = BUCKET_SECONDS[query.granularity];
    return this.#sql
      .exec<{ start: number; admitted: number; refused: number }>(
        `SELECT (start / ${size}) * ${size} AS start, sum(admitted) AS admitted, sum(refused) AS refused FROM ${table} ` +
          "WHERE start >= ? AND start < ? GROUP BY 1 ORDER BY 1",
        query.from,
        query.to,
      )
      .toArray();
  }

  /** Forgets what is past keeping at `now` (Unix seconds); returns when the next row will be (Unix seconds), or undefined when none is left. */
  prune(now: number): number | undefined {
    let next: number | undefined;
    for (const [table, kept] of [[TABLES.minute, KEPT_SECONDS.minute], [TABLES.day, KEPT_SECONDS.day]] as const) {
      this.#sql.exec(`DELETE FROM ${table} WHERE start <= ?`, now - kept);
      const oldest = this.#sql.exec<{ start: number | null }>(`SELECT min(start) AS start FROM ${table}`).one().start;
      if (oldest !== null) next = Math.min(next ?? Infinity, oldest + kept);
    }
    return next;
  }
}
