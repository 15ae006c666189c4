import type { Context } from "hono";
import {
  cancelPendingOrder,
  ORDER_PAGE_SIZE,
  readFirstOrderPage,
  readOrderPage,
  readOrdersVersion,
  type FirstOrderPage,
} from "./queries";
import { BOOKMARK_HEADER, isBookmark } from "../lib/bookmark";
import { readSession, writeSession } from "../lib/d1-session";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { ifNoneMatchMatches } from "../lib/etag";
import { orderListStream } from "./stream";
import { orderPages, laterPageQueries } from "./pages";
import { cachedOrderList, cachingOrderList } from "./list-cache";
import { logLine } from "../lib/log";
import { recentVersion } from "./recent-version";
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
  errors: ["invalid_bookmark", "order_list_too_large"],
  async handle(c) {
    const config = c.get("config");
    const requestId = c.get("requestId");
    const bookmark = bookmarkOf(c);
    const db = readSession(c.env.DB, bookmark);
    const respond = (body: ReadableStream<Uint8Array>, version: string) =>
      c.body(body, 200, { "Content-Type": "application/json", ETag: etagOf(version), ...bookmarkHeader(db) });

    // The version first when it can save the list: a 304, or a cached body.
    // Otherwise version and first page come in one round trip. A request
    // with a bookmark never reuses a version this isolate read before.
    const ifNoneMatch = c.req.header("If-None-Match");
    if (ifNoneMatch !== undefined || config.orderList.cache) {
      const reuseMs = bookmark === undefined ? config.orderList.versionReuseMs : 0;
      const version = recentVersion.get(Date.now(), reuseMs) ?? (await readVersionOf(db));
      if (ifNoneMatch !== undefined && ifNoneMatchMatches(ifNoneMatch, etagOf(version))) {
        return c.body(null, 304, { ETag: etagOf(version), ...bookmarkHeader(db) });
      }
      if (config.orderList.cache) {
        const cached = await cachedOrderList(config.baseUrl, version, (error) =>
          logLine("warn", requestId, "order list cache: lookup failed, read from D1", { error: String(error) }),
        );
        if (cached) return respond(cached, version);
      }
    }

    const began = recentVersion.beginRead();
    const first = await readFirstOrderPage(db);
    const firstVersion = versionOrFault(first.version);
    recentVersion.remember(firstVersion, Date.now(), began);
    refuseOverBudget(first, config.subrequestLimit);
    const pages = orderPages(first, (after, upTo) => readOrderPage(db, after, upTo), config.orderList.readAhead);
    const body = orderListStream(pages, {
      aborted: (error) => logLine("error", requestId, "order list stream aborted", { error: String(error) }),
      // One line per request, however many rows are bad; the values themselves stay out of the logs.
      dropped: (values) =>
        logLine("warn", requestId, "order list: values that do not fit the Order schema were left out", {
          count: values.length,
          values: values.slice(0, DROPPED_VALUES_LOGGED),
        }),
    });
    // HEAD has no body to copy.
    if (!config.orderList.cache || c.req.raw.method === "HEAD") return respond(body, firstVersion);
    return respond(
      cachingOrderList(config.baseUrl, firstVersion, body, {
        background: (work) => c.executionCtx.waitUntil(work),
        // The first page was read in one transaction with the version. Later
        // pages come from the same session, whose reads never go back in time:
        // if the version is unchanged after the last, every page was that version's.
        stillCurrent: async () => laterPageQueries(first) === 0 || (await readOrdersVersion(db)) === firstVersion,
        onError: (error) => logLine("warn", requestId, "order list cache: the list was not stored", { error: String(error) }),
      }),
      firstVersion,
    );
  },
});

/** The version from D1, remembered for lists without a bookmark. */
async function readVersionOf(db: D1DatabaseSession): Promise<string> {
  const began = recentVersion.beginRead();
  const version = versionOrFault(await readOrdersVersion(db));
  recentVersion.remember(version, Date.now(), began);
  return version;
}

/**
 * The orders_version row is the list's only version: without it every list
 * would look like one version forever (cached, revalidated as unchanged). A
 * server fault, never a 200 or a 304.
 */
function versionOrFault(version: string | undefined): string {
  if (version !== undefined) return version;
  // The cause is the request's error log line.
  throw new ApiError("internal_error", "Something went wrong on our side. It has been logged.", {}, new Error("the orders_version row is missing"));
}

/**
 * Subrequests a list leaves for the rest of its request: the key's KV read,
 * the limiter's calls, the cache's lookup and fill, the version reads.
 */
const OTHER_SUBREQUESTS = 10;

/**
 * A list that would need more D1 queries than one invocation may make would
 * be cut off mid-body; it is refused before its first byte instead
 * (README, "Capacity").
 */
function refuseOverBudget(first: FirstOrderPage, subrequestLimit: number): void {
  const pages = 1 + laterPageQueries(first);
  const limit = subrequestLimit - OTHER_SUBREQUESTS;
  if (pages > limit) {
    throw new ApiError(
      "order_list_too_large",
      `The order list needs ${pages} reads of ${ORDER_PAGE_SIZE.toLocaleString("en")} orders, more than this deployment can make for one response (${limit}).`,
    );
  }
}

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
    // The canceller's next list must not be answered with a version read before the cancel.
    recentVersion.forget();
    if (outcome === "not_found") throw new ApiError("order_not_found", `Order ${orderId} does not exist.`);
    if (outcome === "not_cancellable") {
      throw new ApiError("order_already_shipped", `Order ${orderId} has already shipped and cannot be cancelled.`);
    }
    return c.body(null, 204, bookmarkHeader(db));
  },
});
