/**
 * One Workers Analytics Engine data point per request
 * (docs/operations.md#request-analytics): who by account, never by key; which
 * version, route and outcome; how long and how big. The columns' order is
 * the dataset's schema: blob1..blob7 and double1..double3 in the SQL.
 */
export type RequestOutcome = "admitted" | "limited" | "banned" | "unauthenticated" | "error";

/** What the SQL calls each blob and double, in order. */
export const BLOB_COLUMNS = ["version", "route", "method", "statusClass", "outcome", "plan", "colo"] as const;
export const DOUBLE_COLUMNS = ["status", "durationMs", "bytes"] as const;

export interface RequestFacts {
  /** The account of a key, or `ip:<address group>` of a caller without one: the sampling index. */
  index: string;
  versionId: string;
  /** The operation's path template; "unmatched" when no operation matched. */
  route: string;
  method: string;
  status: number;
  outcome: RequestOutcome;
  /** The key's plan; "none" without a key. */
  plan: string;
  /** The Cloudflare data center that answered; "local" where the runtime gives none. */
  colo: string;
  durationMs: number;
  /**
   * Response body bytes as written (counted by what wrote them, a streamed body once it has ended); 0 without a body;
   * -1 for a body its writer did not count.
   */
  bytes: number;
}

/** The request's outcome: a 5xx is an error whatever came before; then the limiter's refusals; then a 401. */
export function outcomeOf(status: number, limit: "admitted" | "limited" | "banned" | undefined): RequestOutcome {
  if (status >= 500) return "error";
  if (limit === "limited" || limit === "banned") return limit;
  if (status === 401) return "unauthenticated";
  return "admitted";
}

export function dataPoint(facts: RequestFacts): AnalyticsEngineDataPoint {
  return {
    indexes: [facts.index],
    blobs: [
      facts.versionId,
      facts.route,
      facts.method,
      `${Math.floor(facts.status / 100)}xx`,
      facts.outcome,
      facts.plan,
      facts.colo,
    ],
    doubles: [facts.status, facts.durationMs, facts.bytes],
  };
}
