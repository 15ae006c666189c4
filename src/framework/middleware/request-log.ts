import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env";
import { dataPoint, outcomeOf, type RequestFacts } from "./request-analytics";

/** One request as operators search for it in Workers Logs (docs/operations.md#logs). */
export interface RequestLogLine {
  level: "info" | "error";
  requestId: string;
  method: string;
  /** The operation's path template, so lines group by route rather than by id; null when nothing matched. */
  route: string | null;
  status: number;
  /** Wall time in ms. Workers only advance the clock across I/O, so this is time spent waiting, not CPU. */
  durationMs: number;
  /** Of that, how long a long poll held the request waiting for an event (absent for every other request). */
  heldMs?: number;
  keyId: string | null;
  plan: string | null;
  /** The Worker version that answered (docs/operations.md#versions); null where the runtime gives none. */
  versionId: string | null;
  /** What the limiter decided; null when it was not reached or did not answer. */
  limit: "admitted" | "limited" | "banned" | null;
  /** For 5xx: what went wrong inside, which the client is never told. */
  error?: string;
}

/** Who a request was for, as the app knows it: the key's id and plan, the limiter's decision, the account. */
export interface RequestParty {
  keyId: string | null;
  plan: string | null;
  limit: RequestLogLine["limit"];
  /** The analytics point's index; undefined before the caller was identified. */
  index: string | undefined;
}

/** One JSON line and one analytics point per request, errors included; a key named by its id only. */
export function requestLog(partyOf: (c: Context<AppEnv>) => RequestParty): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = Date.now();
    await next();
    const party = partyOf(c);
    const failure = c.get("failure");
    const heldMs = c.get("heldMs");
    const line: RequestLogLine = {
      level: c.res.status >= 500 ? "error" : "info",
      requestId: c.get("requestId"),
      method: c.req.method,
      route: c.get("route") ?? null,
      status: c.res.status,
      durationMs: Date.now() - started,
      keyId: party.keyId,
      plan: party.plan,
      versionId: c.env?.CF_VERSION_METADATA?.id || null,
      limit: party.limit,
      ...(heldMs === undefined ? {} : { heldMs }),
      ...(failure === undefined ? {} : { error: failure }),
    };
    (line.level === "error" ? console.error : console.log)(JSON.stringify(line));
    recordRequest(c, line, party.index);
  };
}

/** The request's data point, written once its response is known. */
function recordRequest(c: Context<AppEnv>, line: RequestLogLine, index: string | undefined): void {
  const dataset = c.env?.REQUESTS;
  if (!dataset) return;
  const facts: RequestFacts = {
    index: index ?? "unidentified",
    versionId: line.versionId ?? "",
    route: line.route ?? "unmatched",
    method: line.method,
    status: line.status,
    outcome: outcomeOf(line.status, line.limit ?? undefined),
    plan: line.plan ?? "none",
    colo: c.get("colo") ?? "local",
    // A long poll's wait is the client's choice, not the service's time: the health gate's p99 would judge it.
    durationMs: line.durationMs - (line.heldMs ?? 0),
    bytes: 0,
  };
  // Analytics never fails a request: a point that cannot be written is dropped.
  const write = (bytes: number) => {
    try {
      dataset.writeDataPoint(dataPoint({ ...facts, bytes }));
    } catch {
      // dropped
    }
  };
  // A streamed body's point waits for its end (no waitUntil: nothing should wait on an unread body); only an uncounted
  // response is asked for its body.
  const bytes = c.req.method === "HEAD" ? 0 : (c.get("bodyBytes") ?? (c.res.body ? -1 : 0));
  if (typeof bytes === "number") write(bytes);
  else void bytes.then(write);
}
