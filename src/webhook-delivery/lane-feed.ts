/**
 * What a lane reads from the order event feed (docs/design/order-events.md#lanes), which is durable and kept longer
 * than a delivery waits: so a lane stores nothing to know what it owes.
 */
import { orderEventJson, type OrderEventRow } from "../events/order-event-json";
import type { DroppedValue } from "../orders/order-json";
import type { D1Queryable } from "../lib/d1-session";
import type { LaneEndpoint } from "./endpoint-table";
import { noticeBodies, noticeIdOf } from "./endpoint-notices";

/** Sequences one read scans at first: an endpoint wanting rare types reads a lane far behind in windows. */
export const SCAN_WINDOW = 5_000;
/** The widest window, after empty ones doubled it: what an endpoint wants is read through its type's index. */
export const MAX_SCAN_WINDOW = 5_000_000;

/** Why a delivery whose event the feed no longer holds failed. */
export const EXPIRED = "the event is older than the events kept";

/** What a delivery POSTs: an order event's or a notice's JSON, and its id (the webhook-id). */
export interface LaneMessage {
  id: string;
  body: string;
}

/** An event the endpoint wants, as read. */
export interface WantedEvent {
  seq: number;
  createdAt: number;
  row: OrderEventRow;
}

export type Wanting = Pick<LaneEndpoint, "types" | "from_seq">;

const typesOf = (endpoint: Wanting) => JSON.stringify(endpoint.types.split(","));

/** What an event's delivery POSTs. */
export const messageOf = (row: OrderEventRow): LaneMessage => ({
  id: `evt_${row.seq}`,
  body: orderEventJson(row, [] as DroppedValue[]),
});

/** How far a read goes: `upTo` at most, windows of `window`, and for a lane's run, `handed` (below). */
export interface FeedRead {
  upTo?: number;
  window?: number;
  /**
   * A lane reads no further than the dispatcher's mark or the furthest event it was handed: the mark is the floor a D1
   * restore's guard holds the sequence above, so no new event can take an id a lane has passed.
   */
  handed?: number;
}

/**
 * Up to `limit` events the endpoint wants after `after`, in order; `through`: the sequence up to which the read saw
 * every event it wants; `more`: whether the feed goes on past it; `head`: the feed's newest (as far as the read may
 * go); `expired`: the events after `after` the feed no longer holds (pruned before the lane reached them), up to that
 * sequence.
 */
export async function wantedAfter(
  db: D1Queryable,
  endpoint: Wanting,
  after: number,
  limit: number,
  { upTo = Number.MAX_SAFE_INTEGER, window = SCAN_WINDOW, handed }: FeedRead = {},
): Promise<{ events: WantedEvent[]; through: number; more: boolean; head: number; expired?: number }> {
  const from = Math.max(after, endpoint.from_seq);
  const end = Math.min(from + window, upTo);
  // The feed's head, or for a lane's run the furthest of the dispatcher's mark and what it was handed (`param`).
  const ceiling = (param: string) =>
    handed === undefined
      ? "(SELECT max(seq) FROM order_events)"
      : `min((SELECT max(seq) FROM order_events), max((SELECT mark FROM webhook_dispatch WHERE id = 1), ${param}))`;
  // ORDER BY the qualified integer: a bare `seq` is the text column.
  const [rows, heads] = await db.batch([
    db
      .prepare(
        "SELECT CAST(seq AS TEXT) AS seq, type, created_at, order_row, previous_row, changed FROM order_events WHERE " +
          `seq > ?1 AND seq <= ?2 AND seq <= coalesce(${ceiling("?5")}, 0) AND type IN (SELECT value FROM ` +
          "json_each(?3)) ORDER BY order_events.seq LIMIT ?4",
      )
      .bind(from, end, typesOf(endpoint), limit, ...(handed === undefined ? [] : [handed])),
    // Each its own subquery: SQLite reads one row for a lone min() or max(), the whole table for both at once.
    db
      .prepare(
        `SELECT coalesce(${ceiling("?1")}, 0) AS head, coalesce((SELECT min(seq) FROM order_events), 0) AS oldest`,
      )
      .bind(...(handed === undefined ? [] : [handed])),
  ]);
  const found = rows!.results as unknown as OrderEventRow[];
  const { head, oldest } = heads!.results[0] as { head: number; oldest: number };
  const events = found.map((row) => ({ seq: Number(row.seq), createdAt: Date.parse(row.created_at), row }));
  const full = events.length === limit;
  const through = full ? events.at(-1)!.seq : Math.max(from, Math.min(end, head));
  return { events, through, more: full || through < head, head, ...(oldest > from + 1 && { expired: oldest - 1 }) };
}

/** The newest events the endpoint wants in (after, upTo], newest first, from its last SCAN_WINDOW: a view's. */
export async function newestWanted(
  db: D1Queryable,
  endpoint: Wanting,
  after: number,
  limit: number,
  upTo?: number,
): Promise<{ seq: number; createdAt: number }[]> {
  const { results } = await db
    .prepare(
      "WITH upto AS (SELECT coalesce(?5, (SELECT max(seq) FROM order_events), 0) AS seq) SELECT order_events.seq, " +
        "created_at FROM order_events, upto WHERE order_events.seq <= upto.seq AND order_events.seq > max(?1, " +
        "upto.seq - ?2) AND type IN (SELECT value FROM json_each(?3)) ORDER BY order_events.seq DESC LIMIT ?4",
    )
    .bind(Math.max(after, endpoint.from_seq), SCAN_WINDOW, typesOf(endpoint), limit, upTo ?? null)
    .all<{ seq: number; created_at: string }>();
  return results.map((row) => ({ seq: row.seq, createdAt: Date.parse(row.created_at) }));
}

/** The first event in (after, upTo] made at or after `since` (Unix ms); null when none is. */
export async function firstMadeSince(
  db: D1Queryable,
  after: number,
  upTo: number,
  since: number,
): Promise<{ seq: number; createdAt: number } | null> {
  const row = await db
    .prepare(
      "SELECT seq, created_at FROM order_events WHERE seq > ?1 AND seq <= ?2 AND created_at >= ?3 ORDER BY seq LIMIT 1",
    )
    .bind(after, upTo, new Date(since).toISOString())
    .first<{ seq: number; created_at: string }>();
  return row === null ? null : { seq: row.seq, createdAt: Date.parse(row.created_at) };
}

/** What each row sends, by its key: an event's (its sequence) or a notice's (its negated id); absent once pruned. */
export async function messagesOf(db: D1Queryable, seqs: readonly number[]): Promise<Map<number, LaneMessage>> {
  const events = seqs.filter((seq) => seq > 0);
  const notices = seqs.filter((seq) => seq < 0).map((seq) => -seq);
  const messages = new Map<number, LaneMessage>();
  if (events.length > 0) {
    const { results } = await db
      .prepare(
        "SELECT CAST(seq AS TEXT) AS seq, type, created_at, order_row, previous_row, changed FROM order_events WHERE " +
          "seq IN (SELECT value FROM json_each(?1))",
      )
      .bind(JSON.stringify(events))
      .all<OrderEventRow>();
    for (const row of results) messages.set(Number(row.seq), messageOf(row));
  }
  for (const [id, body] of await noticeBodies(db, notices)) messages.set(-id, { id: noticeIdOf(id), body });
  return messages;
}
