/**
 * One pass of the dispatcher (docs/design/order-events.md#dispatch): the events after its mark handed to the lanes of
 * the endpoints that want them, one call per lane, then the mark moved past them. A lane that failed falls behind and
 * catches up alone, in order, holding nobody else back; a lane reads the events from its own cursor, so an event
 * handed twice is sent once.
 */
import type { D1Queryable } from "../lib/d1-session";
import { withTimeout } from "../lib/call-dependency";
import { readDispatchMark, storeDispatchMark } from "./dispatch-mark";
import { enabledEndpoints, recordLaneStandings, type DispatchEndpoint, type LaneStanding } from "./endpoint-table";
import { backoffMs } from "../lib/backoff";

/** Events a pass reads at most, and a lane behind is handed at most; a full pass is followed by another at once. */
export const DISPATCH_BATCH = 100;
/** Lanes called at once. */
const FAN_OUT = 50;
/** Lanes behind a pass tries at most: each costs a read of its events. */
export const CATCH_UP_LANES = 20;
/**
 * How long a lane may take to take its events: one slower counts as failed, falls behind, and holds a pass back at most
 * this long, then at most once a BEHIND_RETRY_MAX_MS while it keeps failing.
 */
export const LANE_CALL_TIMEOUT_MS = 10_000;
/** The longest wait before a failing lane behind is tried again: bounds how late it resumes. */
export const BEHIND_RETRY_MAX_MS = 60_000;

/** The wait after a lane's `failures`th failure in a row: 1, 2, 4 ... s, then BEHIND_RETRY_MAX_MS. */
export const behindRetryMs = (failures: number) => backoffMs(failures, BEHIND_RETRY_MAX_MS);

export interface DispatchedEvent {
  seq: string;
  type: string;
}

/** The events an endpoint wants among these: it wants the type, and the event came after the endpoint. */
export function wantedBy(
  endpoint: Pick<DispatchEndpoint, "types" | "from_seq">,
  events: readonly DispatchedEvent[],
): string[] {
  const types = new Set(endpoint.types.split(","));
  const from = BigInt(endpoint.from_seq);
  return events.filter((event) => BigInt(event.seq) > from && types.has(event.type)).map((event) => event.seq);
}

/** Each endpoint's events to hand over, for the endpoints at the mark (one behind catches up alone, in order). */
export function matchDeliveries(
  events: readonly DispatchedEvent[],
  endpoints: readonly DispatchEndpoint[],
): Map<string, string[]> {
  const byEndpoint = new Map<string, string[]>();
  for (const endpoint of endpoints) {
    if (endpoint.behind_after !== null) continue;
    const seqs = wantedBy(endpoint, events);
    if (seqs.length > 0) byEndpoint.set(endpoint.id, seqs);
  }
  return byEndpoint;
}

/** The lanes behind whose turn it is, the longest waiting first. */
export function lanesToCatchUp(endpoints: readonly DispatchEndpoint[], now: number): DispatchEndpoint[] {
  return endpoints
    .filter((endpoint) => endpoint.behind_after !== null && (endpoint.behind_retry_at ?? 0) <= now)
    .sort((a, b) => (a.behind_retry_at ?? 0) - (b.behind_retry_at ?? 0))
    .slice(0, CATCH_UP_LANES);
}

/** A lane's standing after a try failed: behind after what it had, tried again later. */
export const fellBehind = (endpoint: DispatchEndpoint, had: string, now: number): LaneStanding => {
  const failures = endpoint.behind_failures + 1;
  return {
    id: endpoint.id,
    behindAfter: endpoint.behind_after ?? had,
    retryAt: now + behindRetryMs(failures),
    failures,
  };
};

export interface DispatchResult {
  /** Where the next pass starts. */
  mark: string;
  /** The pass was full, or a lane behind has more: more events wait. */
  more: boolean;
  /** Enabled endpoints: none means nothing to watch for until one is made. */
  endpoints: number;
  /** Events handed that their lanes had not sent yet. */
  enqueued: number;
  /** The feed's newest event; below the mark after a D1 restore that rewound it. */
  head: string;
  /** Lanes that could not be reached in this pass: each is behind, and catches up alone. */
  failedLanes: number;
  /** Their endpoints. */
  failedEndpoints: string[];
  /** Lanes behind after this pass. */
  behind: number;
}

/** What a pass calls: an endpoint's lane, woken for its events; how many it had not sent yet. */
export type HandToLane = (endpointId: string, seqs: string[]) => Promise<number>;

export interface DispatchOptions {
  /** A mark a D1 restore rewound: what was handed out already; the pass starts there where it is higher. */
  floor?: string;
  laneTimeoutMs?: number;
  now?: number;
}

/** A pass from the mark in D1 (or the floor), then the lanes behind whose turn it is. */
export async function dispatchEvents(
  db: D1Queryable,
  handToLane: HandToLane,
  options: DispatchOptions = {},
): Promise<DispatchResult> {
  const { floor, laneTimeoutMs = LANE_CALL_TIMEOUT_MS, now = Date.now() } = options;
  const stored = (await readDispatchMark(db).first<{ mark: string }>())?.mark ?? "0";
  const mark = floor !== undefined && BigInt(floor) > BigInt(stored) ? floor : stored;
  const [eventRows, endpointRows, headRows] = await db.batch([
    // From the mark, or the oldest endpoint's start. ORDER BY the qualified integer: a bare `seq` is the text column.
    db
      .prepare(
        "SELECT CAST(seq AS TEXT) AS seq, type FROM order_events WHERE seq > max(CAST(?1 AS INTEGER), " +
          "(SELECT coalesce(min(from_seq), 0) FROM webhook_endpoints WHERE status = 'enabled')) ORDER BY " +
          "order_events.seq LIMIT ?2",
      )
      .bind(mark, DISPATCH_BATCH),
    enabledEndpoints(db),
    db.prepare(
      "SELECT CAST(coalesce(max(seq), 0) AS TEXT) AS head, CAST((SELECT coalesce(min(from_seq), 0) FROM " +
        "webhook_endpoints WHERE status = 'enabled') AS TEXT) AS start FROM order_events",
    ),
  ]);
  const events = eventRows!.results as unknown as DispatchedEvent[];
  const endpoints = endpointRows!.results as unknown as DispatchEndpoint[];
  const { head, start } = headRows!.results[0] as { head: string; start: string };
  if (endpoints.length === 0) {
    // Nobody to deliver to: nothing before now will ever be (endpoints start at their creation).
    if (BigInt(head) > BigInt(stored)) await storeDispatchMark(db, head);
    return {
      mark: BigInt(head) > BigInt(mark) ? head : mark,
      more: false,
      endpoints: 0,
      enqueued: 0,
      head,
      failedLanes: 0,
      failedEndpoints: [],
      behind: 0,
    };
  }
  // With nothing past the oldest endpoint's start, the mark moves up to it, or it would show as lag no pass can remove.
  const next =
    events.at(-1)?.seq ?? (BigInt(start) > BigInt(mark) ? (BigInt(start) > BigInt(head) ? head : start) : mark);
  const calls: { endpoint: DispatchEndpoint; seqs: string[]; reached: string; full: boolean }[] = [];
  const byId = new Map(endpoints.map((endpoint) => [endpoint.id, endpoint]));
  for (const [id, seqs] of matchDeliveries(events, endpoints))
    calls.push({ endpoint: byId.get(id)!, seqs, reached: next, full: false });
  const catchingUp = lanesToCatchUp(endpoints, now);
  if (catchingUp.length > 0) {
    // Up to the mark this pass reaches: a lane that reaches it is at the mark, and the next pass hands it what follows.
    const reads = await db.batch(
      catchingUp.map((endpoint) =>
        db
          .prepare(
            "SELECT CAST(seq AS TEXT) AS seq, type FROM order_events WHERE seq > CAST(?1 AS INTEGER) AND seq <= " +
              "CAST(?2 AS INTEGER) ORDER BY order_events.seq LIMIT ?3",
          )
          .bind(endpoint.behind_after, next, DISPATCH_BATCH),
      ),
    );
    catchingUp.forEach((endpoint, index) => {
      const read = reads[index]!.results as unknown as DispatchedEvent[];
      const full = read.length === DISPATCH_BATCH;
      calls.push({ endpoint, seqs: wantedBy(endpoint, read), reached: full ? read.at(-1)!.seq : next, full });
    });
  }
  const standings: LaneStanding[] = [];
  let enqueued = 0;
  const failedEndpoints: string[] = [];
  let more = events.length === DISPATCH_BATCH;
  for (let i = 0; i < calls.length; i += FAN_OUT) {
    const round = calls.slice(i, i + FAN_OUT);
    const settled = await Promise.allSettled(
      round.map(({ endpoint, seqs }) =>
        seqs.length === 0 ? Promise.resolve(0) : withTimeout(handToLane(endpoint.id, seqs), laneTimeoutMs),
      ),
    );
    settled.forEach((result, index) => {
      const { endpoint, reached, full } = round[index]!;
      if (result.status === "rejected") {
        failedEndpoints.push(endpoint.id);
        standings.push(fellBehind(endpoint, mark, now));
        return;
      }
      enqueued += result.value;
      more ||= full;
      if (endpoint.behind_after !== null)
        standings.push({ id: endpoint.id, behindAfter: full ? reached : null, retryAt: null, failures: 0 });
    });
  }
  await recordLaneStandings(db, standings);
  if (next !== stored) await storeDispatchMark(db, next);
  const standingNow = new Map(endpoints.map((endpoint) => [endpoint.id, endpoint.behind_after]));
  for (const standing of standings) standingNow.set(standing.id, standing.behindAfter);
  const behind = [...standingNow.values()].filter((after) => after !== null).length;
  return {
    mark: next,
    more,
    endpoints: endpoints.length,
    enqueued,
    head,
    failedLanes: failedEndpoints.length,
    failedEndpoints,
    behind,
  };
}
