/**
 * One pass of the dispatcher (docs/design/order-events.md#delivery): the
 * events after its mark, matched with the enabled endpoints that want them,
 * become delivery rows (made once: INSERT OR IGNORE) and queue messages;
 * then the caller stores the new mark. A crash between the two re-sends the
 * pass's messages: at least once, never lost.
 */
import type { D1Queryable } from "../lib/d1-session";

/** Events a pass reads at most; a full pass is followed by another at once. */
export const DISPATCH_BATCH = 100;

export interface DispatchedEvent {
  seq: string;
  type: string;
}

export interface DispatchEndpoint {
  id: string;
  types: string;
  from_seq: string;
}

export interface DeliveryMessage {
  deliveryId: string;
}

/** A delivery's id: one per endpoint and event, so making it again finds the same row. */
export const deliveryIdOf = (endpointId: string, seq: string) => `wd_${endpointId.slice("we_".length)}_${seq}`;

/** Every (endpoint, event) pair to deliver: the endpoint wants the type, and the event came after the endpoint. */
export function matchDeliveries(events: readonly DispatchedEvent[], endpoints: readonly DispatchEndpoint[]): { endpointId: string; seq: string }[] {
  return events.flatMap((event) =>
    endpoints
      .filter((endpoint) => BigInt(event.seq) > BigInt(endpoint.from_seq) && endpoint.types.split(",").includes(event.type))
      .map((endpoint) => ({ endpointId: endpoint.id, seq: event.seq })),
  );
}

export interface DispatchResult {
  /** Where the next pass starts. */
  mark: string;
  /** The pass was full: more events wait. */
  more: boolean;
  /** Enabled endpoints: none means nothing to watch for until one is made. */
  endpoints: number;
  enqueued: number;
}

export async function dispatchEvents(db: D1Queryable, queue: Pick<Queue<DeliveryMessage>, "sendBatch">, mark: string, now: string): Promise<DispatchResult> {
  const [eventRows, endpointRows, headRows] = await db.batch([
    // From the mark, or from the oldest endpoint's start: what came before every endpoint is nobody's.
    // ORDER BY the qualified integer: a bare `seq` is the text column, and "1000" sorts before "999".
    db
      .prepare(
        "SELECT CAST(seq AS TEXT) AS seq, type FROM order_events WHERE seq > max(CAST(?1 AS INTEGER), " +
          "(SELECT coalesce(min(from_seq), 0) FROM webhook_endpoints WHERE status = 'enabled')) ORDER BY order_events.seq LIMIT ?2",
      )
      .bind(mark, DISPATCH_BATCH),
    db.prepare("SELECT id, types, CAST(from_seq AS TEXT) AS from_seq FROM webhook_endpoints WHERE status = 'enabled'"),
    db.prepare("SELECT CAST(coalesce(max(seq), 0) AS TEXT) AS head FROM order_events"),
  ]);
  const events = eventRows!.results as unknown as DispatchedEvent[];
  const endpoints = endpointRows!.results as unknown as DispatchEndpoint[];
  // Nobody to deliver to: nothing before now will ever be (endpoints start at their creation).
  if (endpoints.length === 0) return { mark: (headRows!.results[0] as { head: string }).head, more: false, endpoints: 0, enqueued: 0 };

  const deliveries = matchDeliveries(events, endpoints);
  const insert = db.prepare(
    "INSERT OR IGNORE INTO webhook_deliveries (id, endpoint_id, event_seq, outcome, created_at, updated_at) VALUES (?1, ?2, ?3, 'pending', ?4, ?4)",
  );
  for (let i = 0; i < deliveries.length; i += DISPATCH_BATCH) {
    const chunk = deliveries.slice(i, i + DISPATCH_BATCH);
    await db.batch(chunk.map(({ endpointId, seq }) => insert.bind(deliveryIdOf(endpointId, seq), endpointId, seq, now)));
    await queue.sendBatch(chunk.map(({ endpointId, seq }) => ({ body: { deliveryId: deliveryIdOf(endpointId, seq) }, contentType: "json" as const })));
  }
  return { mark: events.at(-1)?.seq ?? mark, more: events.length === DISPATCH_BATCH, endpoints: endpoints.length, enqueued: deliveries.length };
}
