/**
 * An account's usage history in its object's SQLite (docs/design/rate-limits.md#usage-history): admitted and refused
 * per minute (48 hours) and per day (400 days), written in the call that decides, so history and limiter never
 * disagree.
 */

/** One change to the history: admissions granted (negative: handed back) and refusals, in their minute and day. */
export interface UsageChange {
  minuteStart: number;
  dayStart: number;
  admitted: number;
  refused: number;
}

export const GRANULARITIES = ["minute", "hour", "day"] as const;
export type Granularity = (typeof GRANULARITIES)[number];

/** Seconds in each bucket. */
export const BUCKET_SECONDS: Record<Granularity, number> = { minute: 60, hour: 3_600, day: 86_400 };
/** How far back each granularity goes: minutes (and the hours made of them) 48 hours, days 400 days. */
export const KEPT_SECONDS: Record<Granularity, number> = { minute: 48 * 3_600, hour: 48 * 3_600, day: 400 * 86_400 };

/** A range of whole buckets. */
export interface HistoryRange {
  granularity: Granularity;
  /** Unix seconds: the first bucket's start, and the end of the last (exclusive). */
  from: number;
  to: number;
}

export interface UsageRow {
  /** Unix seconds of the bucket's start. */
  start: number;
  admitted: number;
  refused: number;
  /** What isolates hold of the bucket's grants and may yet hand back (absent from older objects). */
  reserved?: number;
}

/** The rows with what isolates still hold moved from `admitted` to `reserved`, in the bucket it was granted in. */
export function withReserved(
  rows: readonly UsageRow[],
  reserved: readonly UsageChange[],
  query: HistoryRange,
): UsageRow[] {
  const size = BUCKET_SECONDS[query.granularity];
  const held = new Map<number, number>();
  for (const grant of reserved) {
    const start = query.granularity === "day" ? grant.dayStart : Math.floor(grant.minuteStart / size) * size;
    held.set(start, (held.get(start) ?? 0) + grant.admitted);
  }
  return rows.map((row) => {
    const reservedHere = Math.min(row.admitted, held.get(row.start) ?? 0);
    return { ...row, admitted: row.admitted - reservedHere, reserved: reservedHere };
  });
}

const TABLES = {
  minute: "usage_minutes",
  day: "usage_days",
} as const;

export class UsageLedger {
  readonly #sql: SqlStorage;

  /** Makes its tables where they are missing: on a new object. */
  constructor(sql: SqlStorage) {
    this.#sql = sql;
    for (const table of Object.values(TABLES)) {
      this.#sql.exec(
        `CREATE TABLE IF NOT EXISTS ${table} (start INTEGER PRIMARY KEY, admitted INTEGER NOT NULL, refused INTEGER ` +
          `NOT NULL)`,
      );
    }
  }

  /** Adds the changes, summed per bucket first (one write per bucket). */
  record(changes: readonly UsageChange[]): void {
    for (const [table, key] of [
      [TABLES.minute, "minuteStart"],
      [TABLES.day, "dayStart"],
    ] as const) {
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
            "ON CONFLICT (start) DO UPDATE SET admitted = admitted + excluded.admitted, refused = refused + " +
            "excluded.refused",
          start,
          admitted,
          refused,
        );
      }
    }
  }

  /** The non-empty buckets of the query's range. */
  read(query: HistoryRange): UsageRow[] {
    const table = query.granularity === "day" ? TABLES.day : TABLES.minute;
    const size = BUCKET_SECONDS[query.granularity];
    return this.#sql
      .exec<{ start: number; admitted: number; refused: number }>(
        `SELECT (start / ${size}) * ${size} AS start, sum(admitted) AS admitted, sum(refused) AS refused FROM ` +
          `${table} ` +
          "WHERE start >= ? AND start < ? GROUP BY 1 ORDER BY 1",
        query.from,
        query.to,
      )
      .toArray();
  }

  /** Forgets what is past keeping at `now` (Unix seconds); returns when the next row will be, or undefined. */
  prune(now: number): number | undefined {
    let next: number | undefined;
    for (const [table, kept] of [
      [TABLES.minute, KEPT_SECONDS.minute],
      [TABLES.day, KEPT_SECONDS.day],
    ] as const) {
      this.#sql.exec(`DELETE FROM ${table} WHERE start <= ?`, now - kept);
      const oldest = this.#sql.exec<{ start: number | null }>(`SELECT min(start) AS start FROM ${table}`).one().start;
      if (oldest !== null) next = Math.min(next ?? Infinity, oldest + kept);
    }
    return next;
  }
}
