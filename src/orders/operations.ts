import type { Context } from "hono";
import { cancelPendingOrder, readFirstOrderPage, readOrderPageAfter, readOrdersVersion } from "./queries";
import { BOOKMARK_HEADER, isBookmark } from "../lib/bookmark";
import { readSession, writeSession } from "../lib/d1-session";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { ifNoneMatchMatches } from "../lib/etag";
import { orderListStream } from "./stream";
import { Order, OrderIdParams } from "./schemas";
import { defineOperation } from "../api/operation";

/** How many of a list's left-out values one log line names; the count covers the rest. */
const DROPPED_VALUES_LOGGED = 20;

const etagOf = (version: string) => `"orders-${version}"`;

/** The client's bookmark, if it sent one; a malformed one is refused rather than silently dropped. */
function bookmarkOf(c: Context<AppEnv>): string | undefined {
  const bookmark = c.req.header(BOOKMARK_HEADER);
  if (bookmark !== undefined && !isBookmark(bookmark)) {
    throw new ApiError("invalid_bookmark", `${BOOKMARK_HEADER} must be a bookmark exactly as this API returned it.`);
  }
  return bookmark;
}

/** The session's bookmark for the response, when D1 gave one. */
function bookmarkHeader(session: D1DatabaseSession): Record<string, string> {
  const bookmark = session.getBookmark();
  return bookmark === null ? {} : { [BOOKMARK_HEADER]: bookmark };
}

export const listOrders = defineOperation({
  operationId: "listOrders",
  scope: "orders:read",
  method: "get",
  path: "/store/orders",
  summary: "List every order",
  tag: "Orders",
  description:
    "Every order placed in the store, ascending by id, as one JSON array. Filtering and pagination are not " +
    "supported in v1 (they are planned for v2). Revalidate with If-None-Match to get 304 when nothing changed. " +
    "Reads are served by the nearest D1 replica; send the X-D1-Bookmark of an earlier response (a cancel's) to " +
    "read data at least as new as that response saw.",
  stability: "stable",
  responses: {
    200: { description: "All orders", body: Order.array(), headers: ["ETag", "X-D1-Bookmark"] },
    304: {
      description: "Not Modified: an ETag in If-None-Match is the current list's. No body; keep using the list you hold.",
      headers: ["ETag", "X-D1-Bookmark"],
    },
  },
  requestHeaders: ["If-None-Match", "X-D1-Bookmark"],
  errors: ["invalid_bookmark"],
  async handle(c) {
    const db = readSession(c.env.DB, bookmarkOf(c));
    // Only a client that revalidates pays for the version read; everyone else
    // gets version and first page in one round trip.
    const ifNoneMatch = c.req.header("If-None-Match");
    if (ifNoneMatch !== undefined) {
      const etag = etagOf(await readOrdersVersion(db));
      if (ifNoneMatchMatches(ifNoneMatch, etag)) {
        return c.body(null, 304, { ETag: etag, ...bookmarkHeader(db) });
      }
    }
    const { version, rows } = await readFirstOrderPage(db);
    const requestId = c.get("requestId");
    const body = orderListStream(rows, (afterId) => readOrderPageAfter(db, afterId), {
      aborted: (error) =>
        console.error(JSON.stringify({ level: "error", requestId, message: "order list stream aborted", error: String(error) })),
      // One line per request, however many rows are bad; the values themselves stay out of the logs.
      dropped: (values) =>
        console.warn(
          JSON.stringify({
            level: "warn",
            requestId,
            message: "order list: values that do not fit the Order schema were left out",
            count: values.length,
            values: values.slice(0, DROPPED_VALUES_LOGGED),
          }),
        ),
    });
    return c.body(body, 200, { "Content-Type": "application/json", ETag: etagOf(version), ...bookmarkHeader(db) });
  },
});

export const cancelOrder = defineOperation({
  operationId: "cancelOrder",
  scope: "orders:write",
  method: "delete",
  path: "/store/orders/{orderId}",
  summary: "Cancel a pending order",
  tag: "Orders",
  description:
    "Cancels an order whose status is pending. Cancelling an order that is already cancelled succeeds again " +
    "and changes nothing, so a lost response can be retried safely. Shipped and delivered orders cannot be cancelled.",
  stability: "stable",
  responses: {
    204: {
      description: "The order is cancelled. X-D1-Bookmark: send it with the next list to be sure to see this cancel.",
      headers: ["X-D1-Bookmark"],
    },
  },
  errors: ["invalid_order_id", "order_not_found", "order_already_shipped"],
  params: {
    schema: OrderIdParams,
    invalid: { code: "invalid_order_id", message: "orderId must be a decimal 64-bit integer such as 42." },
  },
  async handle(c, { orderId }) {
    const db = writeSession(c.env.DB);
    const outcome = await cancelPendingOrder(db, orderId, new Date().toISOString());
    if (outcome === "not_found") throw new ApiError("order_not_found", `Order ${orderId} does not exist.`);
    if (outcome === "not_cancellable") {
      throw new ApiError("order_already_shipped", `Order ${orderId} has already shipped and cannot be cancelled.`);
    }
    return c.body(null, 204, bookmarkHeader(db));
  },
});
