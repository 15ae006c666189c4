/**
 * One pass of the dispatcher (docs/design/order-events.md#dispatch): the
 * events after its mark, matched with the enabled endpoints that want them,
 * handed to each endpoint's lane in one call per lane; then the mark moves
 * to the last event every lane that wanted it took. A lane that failed holds
 * the mark at its first event, and the next pass hands it (and the others)
 * those events again: a lane keeps one row per event, so none is sent twice
 * for it.
 */
import type { D1Queryable } from "../lib/d1-session";
import { withTimeout } from "../lib/dependency";
import { readDispatchMark, storeDispatchMark } from "./dispatch-mark";
import { enabledEndpoints, type DispatchEndpoint } from "./endpoint-table";

/** Events a pass reads at most; a full pass is followed by another at once. */
export const DISPATCH_BATCH = 100;
/** Lanes called at once. */
const FAN_OUT = 50;
/** How long a lane may take to take its events: one that hangs counts as unreachable, and holds back no other lane's. */
export const LANE_CALL_TIMEOUT_MS = 10_000;

export interface DispatchedEvent {
  seq: string;
  type: string;
}

/** Each endpoint's events to hand over: it wants the type, and the event came after the endpoint. */
export function matchDeliveries(events: readonly DispatchedEvent[], endpoints: readonly DispatchEndpoint[]): Map<string, string[]> {
  const byEndpoint = new Map<string, string[]>();
  for (const endpoint of endpoints) {
    const types = new Set(endpoint.types.split(","));
    const from = BigInt(endpoint.from_seq);
    const seqs = events.filter((event) => BigInt(event.seq) > from && types.has(event.type)).map((event) => event.seq);
    if (seqs.length > 0) byEndpoint.set(endpoint.id, seqs);
  }
  return byEndpoint;
}

/** The last event fully fanned out: before the first event of any lane that failed, else the pass's last. */
export function markAfter(events: readonly DispatchedEvent[], failed: readonly string[][], mark: string): string {
  const firstFailed = failed.reduce<bigint | null>((low, seqs) => (low === null || BigInt(seqs[0]!) < low ? BigInt(seqs[0]!) : low), null);
  if (firstFailed === null) return events.at(-1)?.seq ?? mark;
  const done = events.filter((event) => BigInt(event.seq) < firstFailed).at(-1)?.seq;
  return done ?? mark;
}

export interface DispatchResult {
  /** Where the next pass starts. */
  mark: string;
  /** The pass was full: more events wait. */
  more: boolean;
  /** Enabled endpoints: none means nothing to watch for until one is made. */
  endpoints: number;
  /** Deliveries made (events new to their lanes). */
  enqueued: number;
  /** The feed's newest event; below the mark after a D1 restore that rewound it. */
  head: string;
  /** Lanes that could not be reached: their events are handed over again by the next pass. */
  failedLanes: number;
}

/** What a pass calls: an endpoint's lane, handed its events; how many were new to it. */
export type HandToLane = (endpointId: string, seqs: string[]) => Promise<number>;

/** A pass from the mark in D1, or from `floor` where that is higher (a mark a D1 restore rewound: what was handed out already). */
export async function dispatchEvents(db: D1Queryable, handToLane: HandToLane, floor?: string, laneTimeoutMs = LANE_CALL_TIMEOUT_MS): Promise<DispatchResult> {
  const stored = (await readDispatchMark(db).first<{ mark: string }>())?.mark ?? "0";
  const mark = floor !== undefined && BigInt(floor) > BigInt(stored) ? floor : stored;
  const [eventRows, endpointRows, headRows] = await db.batch([
    // From the mark, or from the oldest endpoint's start: what came before every endpoint is nobody's.
    // ORDER BY the qualified integer: a bare `seq` is the text column, and "1000" sorts before "999".
    db
      .prepare(
        "SELECT CAST(seq AS TEXT) AS seq, type FROM order_events WHERE seq > max(CAST(?1 AS INTEGER), " +
          "(SELECT coalesce(min(from_seq), 0) FROM webhook_endpoints WHERE status = 'enabled')) ORDER BY order_events.seq LIMIT ?2",
      )
      .bind(mark, DISPATCH_BATCH),
    enabledEndpoints(db),
    db.prepare("SELECT CAST(coalesce(max(seq), 0) AS TEXT) AS head FROM order_events"),
  ]);
  const events = eventRows!.results as unknown as DispatchedEvent[];
  const endpoints = endpointRows!.results as unknown as DispatchEndpoint[];
  const head = (headRows!.results[0] as { head: string }).head;
  if (endpoints.length === 0) {
    // Nobody to deliver to: nothing before now will ever be (endpoints start at their creation).
    if (BigInt(head) > BigInt(stored)) await storeDispatchMark(db, head);
    return { mark: BigInt(head) > BigInt(mark) ? head : mark, more: false, endpoints: 0, enqueued: 0, head, failedLanes: 0 };
  }
  const lanes = [...matchDeliveries(events, endpoints)];
  const failed: string[][] = [];
  let enqueued = 0;
  for (let i = 0; i < lanes.length; i += FAN_OUT) {
    const settled = await Promise.allSettled(lanes.slice(i, i + FAN_OUT).map(([endpointId, seqs]) => withTimeout(handToLane(endpointId, seqs), laneTimeoutMs)));
    settled.forEach((result, index) => {
      if (result.status === "fulfilled") enqueued += result.value;
      else failed.push(lanes[i + index]![1]);
    });
  }
  const next = markAfter(events, failed, mark);
  if (next !== stored) await storeDispatchMark(db, next);
  return { mark: next, more: events.length === DISPATCH_BATCH && failed.length === 0, endpoints: endpoints.length, enqueued, head, failedLanes: failed.length };
}
