/**
 * One Workers Analytics Engine data point per request
 * (docs/operations.md#request-analytics): who by budget, never by key; which
 * version, route and outcome; how long and how big. The columns' order is
 * the dataset's schema: blob1..blob7 and double1..double3 in the SQL.
 */
export type RequestOutcome = "admitted" | "limited" | "banned" | "unauthenticated" | "error";

/** What the SQL calls each blob and double, in order. */
export const BLOB_COLUMNS = ["version", "route", "method", "statusClass", "outcome", "plan", "colo"] as const;
export const DOUBLE_COLUMNS = ["status", "durationMs", "bytes"] as const;

export interface RequestFacts {
  /** The budget of a key, or `ip:<address group>` of a caller without one: the sampling index. */
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
  /** Response body bytes as sent. */
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
    blobs: [facts.versionId, facts.route, facts.method, `${Math.floor(facts.status / 100)}xx`, facts.outcome, facts.plan, facts.colo],
    doubles: [facts.status, facts.durationMs, facts.bytes],
  };
}

/**
 * The body as sent, counted: calls `done(bytes)` once, when it has all gone
 * or the client went away, so a streamed list reports what it streamed.
 */
export function countedBody(body: ReadableStream<Uint8Array>, done: (bytes: number) => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let bytes = 0;
  let reported = false;
  const report = () => {
    if (!reported) done(bytes);
    reported = true;
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done: ended, value } = await reader.read();
        if (ended) {
          controller.close();
          report();
          return;
        }
        bytes += value.byteLength;
        controller.enqueue(value);
      } catch (error) {
        report();
        controller.error(error);
      }
    },
    cancel(reason) {
      report();
      return reader.cancel(reason);
    },
  });
}
