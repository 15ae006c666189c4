/**
 * The order event feed (docs/api.md#events-and-webhooks): a page after a position, with the feed's bounds in one
 * transaction; and the long poll, reading at most once a second. The operation maps it to HTTP.
 */
import { ApiError } from "../framework/api-error";
import type { D1Queryable } from "../lib/d1-session";
import { callDependency } from "../lib/call-dependency";
import type { FeedQuery } from "./order-event-feed-query";
import type { OrderEventRow } from "./order-event-json";

/** A waiting request reads D1 at most this often. */
export const FEED_POLL_MS = 1_000;

export interface FeedPage {
  events: OrderEventRow[];
  /** The sequence number the next page starts after. */
  nextSeq: string;
}

const COLUMNS = "seq, type, created_at, order_row, previous_row, changed";
const START = "max(CAST(?1 AS INTEGER), (SELECT pruned_through FROM order_event_retention WHERE id = 1))";

/** The page's statement: through the sequence key, or each type's index, merged in sequence order. */
function pageStatement(db: D1Queryable, query: FeedQuery, after: string): D1PreparedStatement {
  const arms = (query.types ?? [undefined]).map((_, i) => {
    const ofType = query.types ? `type = ?${i + 3} AND ` : "";
    return `SELECT * FROM (SELECT ${COLUMNS} FROM order_events WHERE ${ofType}seq > ${START} ORDER BY seq LIMIT ?2)`;
  });
  // ORDER BY the arms' integer: a bare `seq` is the result's text column.
  const sql =
    `SELECT CAST(seq AS TEXT) AS seq, type, created_at, order_row, previous_row, changed FROM ` +
    `(${arms.join(" UNION ALL ")}) AS arms ORDER BY arms.seq LIMIT ?2`;
  return db.prepare(sql).bind(after, query.limit, ...(query.types ?? []));
}

const larger = (a: string, b: string) => (BigInt(a) >= BigInt(b) ? a : b);

/** One page after `query.after` (or the oldest event kept); 410 `cursor_expired` when events after it were pruned. */
export async function readFeedPage(db: D1Queryable, query: FeedQuery): Promise<FeedPage> {
  if (query.after === "latest") {
    // Where the next event will be: after the newest (or what was pruned, should none be kept).
    const head = await callDependency("D1", () =>
      db
        .prepare(
          "SELECT CAST(max(pruned_through, coalesce((SELECT max(seq) FROM order_events), 0)) AS TEXT) AS head FROM " +
            "order_event_retention WHERE id = 1",
        )
        .first<string>("head"),
    );
    return { events: [], nextSeq: head ?? "0" };
  }
  const after = query.after ?? "0";
  // D1 failing twice is 503 service_unavailable with Retry-After, as for every other read.
  const [bounds, page] = await callDependency("D1", () =>
    db.batch([
      db.prepare(
        "SELECT CAST(pruned_through AS TEXT) AS pruned, CAST(max(pruned_through, coalesce((SELECT max(seq) FROM " +
          "order_events), 0)) AS TEXT) AS head " +
          "FROM order_event_retention WHERE id = 1",
      ),
      pageStatement(db, query, after),
    ]),
  );
  const { pruned, head } = bounds!.results[0] as { pruned: string; head: string };
  if (query.after !== undefined && BigInt(query.after) < BigInt(pruned)) {
    throw new ApiError(
      "cursor_expired",
      "after is older than the events kept (30 days): start again without after, from the oldest event kept, and " +
        "refresh what you keep from the order list.",
    );
  }
  const events = page!.results as unknown as OrderEventRow[];
  // A full page continues after its last event; a short one after everything the read saw, matched or not.
  const nextSeq = events.length === query.limit ? events.at(-1)!.seq : larger(larger(after, pruned), head);
  return { events, nextSeq };
}

export interface FeedWaiting {
  /** Ends the wait early (the client went away). */
  signal: AbortSignal;
  /** Waits `ms`, or until `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export const sleepUnlessAborted = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });

/**
 * A page with events, or an empty one once `waitSeconds` have passed with none: one read, then one a second at most.
 */
export async function readFeed(db: D1Queryable, query: FeedQuery, waiting: FeedWaiting): Promise<FeedPage> {
  const deadline = Date.now() + query.waitSeconds * 1000;
  for (let next = query; ; ) {
    const page = await readFeedPage(db, next);
    const left = deadline - Date.now();
    if (page.events.length > 0 || left <= 0 || waiting.signal.aborted) return page;
    await waiting.sleep(Math.min(FEED_POLL_MS, left), waiting.signal);
    // Nobody is left to answer: no more reads.
    if (waiting.signal.aborted) return page;
    next = { ...next, after: page.nextSeq };
  }
}
