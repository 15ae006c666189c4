/**
 * One Analytics Engine data point per request (docs/operations.md#request-analytics): the account, never the key;
 * version, route, outcome; time and size. The columns' order is the dataset's schema.
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
  /** Body bytes as written (a stream's once ended); 0 without a body; -1 when its writer did not count it. */
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
