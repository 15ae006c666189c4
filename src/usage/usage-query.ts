/** The usage history's query, read strictly, and its answer: every bucket of the range, empty ones as zeros. */
import { ApiError } from "../framework/api-error";
import { strictQuery } from "../framework/operations/strict-query";
import { rfc3339ToUtc } from "../lib/date-time";
import {
  BUCKET_SECONDS,
  GRANULARITIES,
  KEPT_SECONDS,
  type Granularity,
  type HistoryRange,
  type UsageRow,
} from "../account/usage-ledger";
/** The range without from: the last hour, day or 30 days, the current bucket included. */
const DEFAULT_BUCKETS: Record<Granularity, number> = { minute: 60, hour: 24, day: 30 };
/** Buckets in one answer at most: a day of minutes. */
export const MAX_BUCKETS = 1_440;

export const USAGE_PARAMETERS = {
  granularity: `one of ${GRANULARITIES.join(", ")} (default hour)`,
  from:
    "an RFC 3339 date-time: the first bucket is the one holding it (default: the last hour of minutes, day of " +
    "hours or 30 days)",
  to:
    "an RFC 3339 date-time after from: the last bucket is the one holding it, or the one before when it is a " +
    "bucket's start (default: now, the current bucket included)",
} as const;

export type UsageQuery = HistoryRange;

export interface UsageBucket {
  start: string;
  admitted: number;
  refused: number;
  reserved: number;
}

const floorTo = (seconds: number, size: number) => Math.floor(seconds / size) * size;
const ceilTo = (seconds: number, size: number) => Math.ceil(seconds / size) * size;

/** The query of `search` at `now` (Unix ms); 400 invalid_query naming what is wrong. */
export function readUsageQuery(search: URLSearchParams, now: number): UsageQuery {
  const { value, invalid } = strictQuery(search, USAGE_PARAMETERS);
  const granularityText = value("granularity") ?? "hour";
  if (!(GRANULARITIES as readonly string[]).includes(granularityText)) throw invalid("granularity", granularityText);
  const granularity = granularityText as Granularity;
  const size = BUCKET_SECONDS[granularity];
  const instant = (name: "from" | "to") => {
    const text = value(name);
    if (text === undefined) return undefined;
    const utc = rfc3339ToUtc(text);
    if (utc === undefined) throw invalid(name, text);
    return Date.parse(utc) / 1000;
  };
  const nowSeconds = now / 1000;
  const to = ceilTo(instant("to") ?? floorTo(nowSeconds, size) + size, size);
  const fromInstant = instant("from");
  const from = fromInstant === undefined ? to - DEFAULT_BUCKETS[granularity] * size : floorTo(fromInstant, size);
  if (from >= to) throw new ApiError("invalid_query", "from must come before to.");
  if ((to - from) / size > MAX_BUCKETS) {
    throw new ApiError(
      "invalid_query",
      `At most ${MAX_BUCKETS} buckets in one answer; this range has ${(to - from) / size}. Ask for a ` +
        `shorter range or ` +
        `` +
        `` +
        `a coarser granularity.`,
    );
  }
  // The oldest bucket wholly kept: the one holding the keeping time's edge is being pruned, and would read 0.
  const oldest = floorTo(nowSeconds - KEPT_SECONDS[granularity], size) + size;
  if (from < oldest) {
    throw new ApiError(
      "invalid_query",
      `${granularity === "day" ? "Days are" : "Minutes and hours are"} kept for ` +
        `${granularity === "day" ? "400 days" : "48 hours"}: from must be ` +
        `${new Date(oldest * 1000).toISOString()} or ` +
        `` +
        `` +
        `later${granularity === "day" ? "" : "; ask for days before then"}.`,
    );
  }
  return { granularity, from, to };
}

/** Every bucket of the query's range, in order, the rows' counts where there are rows and zeros elsewhere. */
export function fillBuckets(rows: readonly UsageRow[], query: UsageQuery): UsageBucket[] {
  const size = BUCKET_SECONDS[query.granularity];
  const byStart = new Map(rows.map((row) => [row.start, row]));
  const buckets: UsageBucket[] = [];
  for (let start = query.from; start < query.to; start += size) {
    const row = byStart.get(start);
    buckets.push({
      start: new Date(start * 1000).toISOString(),
      admitted: row?.admitted ?? 0,
      refused: row?.refused ?? 0,
      reserved: row?.reserved ?? 0,
    });
  }
  return buckets;
}
