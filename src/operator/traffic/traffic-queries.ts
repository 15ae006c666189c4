/**
 * The operators' traffic view (docs/operations.md#traffic) as Analytics Engine queries and readings of their answers
 * (index1 the account or address group, blob5 the outcome, blob6 the plan): it scales to any number of accounts. Plain
 * functions; the operation makes the call.
 */
import type { RequestOutcome } from "../../framework/middleware/request-analytics";

/** The ranges an operator may choose, each with the bucket its series is counted in. */
export const TRAFFIC_RANGES = {
  "1h": { minutes: 60, bucketMinutes: 1 },
  "6h": { minutes: 360, bucketMinutes: 5 },
  "24h": { minutes: 1_440, bucketMinutes: 15 },
  "7d": { minutes: 10_080, bucketMinutes: 60 },
} as const;
export type TrafficRange = keyof typeof TRAFFIC_RANGES;

/** A ban still refusing: one that refused a request within this many minutes. */
export const BAN_SEEN_MINUTES = 5;
/** Rows in each top list. */
export const TOP = 10;

const OUTCOMES = [
  "admitted",
  "limited",
  "banned",
  "unauthenticated",
  "error",
] as const satisfies readonly RequestOutcome[];
const REFUSED = "blob5 IN ('limited', 'banned')";
const WEIGHT = "SUM(_sample_interval)";
const REFUSED_WEIGHT = `SUM(IF(${REFUSED}, _sample_interval, 0))`;

const DATASET = /^[A-Za-z0-9_]+$/;
const since = (minutes: number) => `timestamp > NOW() - INTERVAL '${minutes}' MINUTE`;

/** Each query of the view over `range`, by name. */
export function trafficQueries(
  dataset: string,
  range: TrafficRange,
): Record<"series" | "topByRequests" | "topByRefusals" | "bans" | "keyless", string> {
  if (!DATASET.test(dataset)) throw new Error(`the analytics dataset "${dataset}" is not a plain name`);
  const { minutes, bucketMinutes } = TRAFFIC_RANGES[range];
  const keyed = `${since(minutes)} AND blob6 != 'none'`;
  const keyless = `${since(minutes)} AND blob6 = 'none' AND index1 != 'unidentified'`;
  const sql = (...lines: string[]) => [...lines, "FORMAT JSON"].join("\n");
  return {
    series: sql(
      `SELECT toUnixTimestamp(toStartOfInterval(timestamp, INTERVAL '${bucketMinutes}' MINUTE)) AS bucket, blob5 AS ` +
        `outcome, ${WEIGHT} AS requests`,
      `FROM ${dataset} WHERE ${since(minutes)}`,
      "GROUP BY bucket, outcome ORDER BY bucket",
    ),
    topByRequests: sql(
      `SELECT index1 AS budget, ${WEIGHT} AS requests, ${REFUSED_WEIGHT} AS refused`,
      `FROM ${dataset} WHERE ${keyed}`,
      `GROUP BY budget ORDER BY requests DESC LIMIT ${TOP}`,
    ),
    topByRefusals: sql(
      `SELECT index1 AS budget, ${WEIGHT} AS requests, ${REFUSED_WEIGHT} AS refused`,
      `FROM ${dataset} WHERE ${keyed}`,
      `GROUP BY budget ORDER BY refused DESC LIMIT ${TOP}`,
    ),
    bans: sql(
      `SELECT index1 AS caller, ${WEIGHT} AS refused, toUnixTimestamp(MAX(timestamp)) AS last`,
      `FROM ${dataset} WHERE ${since(BAN_SEEN_MINUTES)} AND blob5 = 'banned' AND index1 != 'unidentified'`,
      "GROUP BY caller ORDER BY refused DESC LIMIT 100",
    ),
    keyless: sql(
      `SELECT index1 AS addressGroup, ${WEIGHT} AS requests, ${REFUSED_WEIGHT} AS refused`,
      `FROM ${dataset} WHERE ${keyless}`,
      `GROUP BY addressGroup ORDER BY refused DESC LIMIT ${TOP}`,
    ),
  };
}

export type TrafficBucket = { start: string } & Record<(typeof OUTCOMES)[number], number>;
export interface AccountTraffic {
  budget: string;
  requests: number;
  refused: number;
}
export interface BanSeen {
  /** An account, or `ip:<address group>` for a caller without a key. */
  caller: string;
  refused: number;
  lastRefusedAt: string;
}
export interface AddressGroupTraffic {
  addressGroup: string;
  requests: number;
  refused: number;
}

/** The SQL API's rows (FORMAT JSON: numbers may come quoted); an answer without them is an error naming what came. */
function rowsOf(answer: unknown): Record<string, unknown>[] {
  const data = (answer as { data?: unknown } | null)?.data;
  if (!Array.isArray(data))
    throw new Error(`the SQL API answered without data: ${JSON.stringify(answer).slice(0, 200)}`);
  return data as Record<string, unknown>[];
}

function count(row: Record<string, unknown>, name: string): number {
  const value = Number(row[name]);
  if (!Number.isFinite(value))
    throw new Error(`the SQL API answered ${name} ${JSON.stringify(row[name])}, not a number`);
  return Math.round(value);
}

const isoOf = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString();

/** Every bucket of the range up to `now` (Unix ms), the empty ones as zeros, oldest first. */
export function readSeries(answer: unknown, range: TrafficRange, now: number): TrafficBucket[] {
  const { minutes, bucketMinutes } = TRAFFIC_RANGES[range];
  const size = bucketMinutes * 60;
  const last = Math.floor(now / 1000 / size) * size;
  const first = last - (minutes / bucketMinutes - 1) * size;
  const buckets = new Map<number, TrafficBucket>();
  for (let start = first; start <= last; start += size)
    buckets.set(start, { start: isoOf(start), admitted: 0, limited: 0, banned: 0, unauthenticated: 0, error: 0 });
  for (const row of rowsOf(answer)) {
    const bucket = buckets.get(count(row, "bucket"));
    const outcome = String(row.outcome);
    // A point before the first whole bucket is skipped, and an outcome a newer writer added.
    if (bucket && (OUTCOMES as readonly string[]).includes(outcome))
      bucket[outcome as (typeof OUTCOMES)[number]] += count(row, "requests");
  }
  return [...buckets.values()];
}

export function readAccounts(answer: unknown): AccountTraffic[] {
  return rowsOf(answer).map((row) => ({
    budget: String(row.budget),
    requests: count(row, "requests"),
    refused: count(row, "refused"),
  }));
}

export function readBans(answer: unknown): BanSeen[] {
  return rowsOf(answer).map((row) => ({
    caller: String(row.caller),
    refused: count(row, "refused"),
    lastRefusedAt: isoOf(count(row, "last")),
  }));
}

export function readAddressGroups(answer: unknown): AddressGroupTraffic[] {
  return rowsOf(answer)
    .map((row) => ({
      addressGroup: String(row.addressGroup).replace(/^ip:/, ""),
      requests: count(row, "requests"),
      refused: count(row, "refused"),
    }))
    .filter((group) => group.refused > 0);
}
