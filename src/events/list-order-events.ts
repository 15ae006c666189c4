import { defineOperation } from "../framework/operations/define-operation";
import { documentedParameters } from "../framework/operations/strict-query";
import { readSession } from "../lib/d1-session";
import { logLine } from "../lib/log";
import { CURSOR_PATTERN } from "../lib/opaque-cursor";
import { droppedValuesWarning, type DroppedValue } from "../orders/order-json";
import { bookmarkHeader, bookmarkOf } from "../read-your-writes/d1-bookmark";
import type { OwnWrites } from "../read-your-writes/own-writes";
import {
  DEFAULT_EVENT_LIMIT,
  FEED_PARAMETERS,
  feedCursor,
  MAX_EVENT_LIMIT,
  MAX_WAIT_SECONDS,
  readFeedQuery,
} from "./order-event-feed-query";
import { readFeed, sleepUnlessAborted } from "./order-event-feed";
import { orderEventJson } from "./order-event-json";
import { ORDER_EVENT_TYPES, OrderEventPage } from "./order-event-schemas";
import { textBody } from "../framework/counted-body";

const typePattern = ORDER_EVENT_TYPES.map((type) => type.replace(".", "\\.")).join("|");

declare module "hono" {
  interface ContextVariableMap {
    /**
     * How long the feed's wait held the request: logged, and left out of the analytics duration the health gate judges.
     */
    heldMs?: number;
  }
}

/** Each query parameter's JSON schema in the document; readFeedQuery() is what enforces them. */
const QUERY_SCHEMAS: Record<keyof typeof FEED_PARAMETERS, Record<string, unknown>> = {
  after: { type: "string", minLength: 1, maxLength: 200, pattern: CURSOR_PATTERN },
  types: { type: "string", pattern: `^(${typePattern})(,(${typePattern}))*$` },
  limit: { type: "integer", minimum: 1, maximum: MAX_EVENT_LIMIT, default: DEFAULT_EVENT_LIMIT },
  wait: { type: "integer", minimum: 0, maximum: MAX_WAIT_SECONDS, default: 0 },
};

/** `GET /v2/store/order-events`: every change to an order, in commit order (docs/api.md#events-and-webhooks). */
export const listOrderEvents = (ownWrites: OwnWrites) =>
  defineOperation({
    operationId: "listOrderEvents",
    scope: "orders:read",
    method: "get",
    path: "/store/order-events",
    summary: "Follow the changes to orders",
    tag: "Events",
    description:
      "Every change to an order, by this API or by any other system writing the store's database, in the order it " +
      "was committed, a page at a time, kept 30 days. Send nextCursor as after for the next page; it is never null: " +
      "after an empty page it says where the next event will be. With wait, an empty page is held open until an " +
      "event arrives or the wait ends. An after older than the events kept is 410 cursor_expired.",
    stability: "beta",
    queryParameters: documentedParameters(FEED_PARAMETERS, QUERY_SCHEMAS),
    responses: { 200: { description: "A page of events", body: OrderEventPage, headers: ["X-D1-Bookmark"] } },
    requestHeaders: ["X-D1-Bookmark"],
    errors: ["invalid_query", "invalid_cursor", "cursor_expired", "invalid_bookmark"],
    async handle(c) {
      const query = await readFeedQuery(new URL(c.req.url).searchParams);
      const db = readSession(c.env.DB, ownWrites.floor(bookmarkOf(c), Date.now()));
      let heldMs = 0;
      const sleep = async (ms: number, signal: AbortSignal) => {
        const from = Date.now();
        await sleepUnlessAborted(ms, signal);
        heldMs += Date.now() - from;
      };
      const page = await readFeed(db, query, { signal: c.req.raw.signal, sleep });
      if (query.waitSeconds > 0) c.set("heldMs", heldMs);
      const dropped: DroppedValue[] = [];
      const data = page.events.map((event) => orderEventJson(event, dropped)).join(",");
      if (dropped.length > 0) {
        logLine("warn", c.get("requestId"), ...droppedValuesWarning("order events", dropped));
      }
      const body = `{"data":[${data}],"nextCursor":${JSON.stringify(await feedCursor(page.nextSeq))}}`;
      return textBody(c, body, 200, { "Content-Type": "application/json", ...bookmarkHeader(db) });
    },
  });
