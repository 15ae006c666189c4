/**
 * The whole order list as one pipeline (docs/design/order-list.md#the-cache): the version (reused
 * within a second, or read), a 304 when the client holds it, the edge's cached
 * body, or the first page with every page's end, the capacity check, the later
 * pages read ahead, the schema-driven writer, and the cache filled from the
 * same pass. Plain inputs and outputs; the operation only maps them to HTTP.
 */
import { ApiError } from "../../framework/api-error";
import type { Config } from "../../framework/read-config";
import { ifNoneMatchMatches } from "../../lib/etag";
import { cachedOrderList, cachingOrderList, type WholeFills } from "./order-list-cache";
import { orderListStream } from "./order-list-stream";
import { laterPageQueries, pagesReadAhead } from "./list-read-ahead";
import {
  ORDER_PAGE_SIZE,
  readFirstOrderPage,
  readOrderRange,
  readOrdersVersion,
  type FirstOrderPage,
} from "../order-queries";
import type { VersionMemory } from "../../read-your-writes/recent-version";
import { droppedValuesWarning } from "../order-json";

/**
 * Subrequests a list leaves for the rest of its request: the key's KV read,
 * the limiter's calls, the cache's lookup and fill, the version reads.
 */
const OTHER_SUBREQUESTS = 10;

export interface OrderListRequest {
  /** The client's D1 bookmark: then no version this isolate read before is reused. */
  bookmark: string | undefined;
  ifNoneMatch: string | undefined;
  /** A HEAD has no body to copy into the cache. */
  head: boolean;
  /** versions.beginRead() as the request's D1 session was opened (own-writes.ts, startRead). */
  began: number;
}

export interface OrderListContext {
  /** The request's D1 session (bookmarked or not). */
  db: D1DatabaseSession;
  config: Pick<Config, "baseUrl" | "orderList" | "subrequestLimit">;
  log(level: "warn" | "error", message: string, fields: Record<string, unknown>): void;
  /** Work that may finish after the response (waitUntil). */
  background(work: Promise<unknown>): void;
  /** The version this isolate read last (isolate-memory.ts). */
  versions: VersionMemory;
  /** Which fill of each recent version this isolate knows is whole (isolate-memory.ts). */
  fills: WholeFills;
}

/**
 * A list's body comes with its size: known for a cached one, once it has streamed for one read now (the request's
 * analytics point).
 */
export type OrderList =
  | { kind: "not-modified"; version: string }
  | { kind: "list"; version: string; body: ReadableStream<Uint8Array>; bytes: number | Promise<number> };

export const orderListEtag = (version: string) => `"orders-${version}"`;

export async function readOrderList(request: OrderListRequest, context: OrderListContext): Promise<OrderList> {
  const { db, config, log, versions, fills } = context;
  // The version first when it can save the list: a 304, or a cached body.
  // Otherwise version and first page come in one round trip.
  if (request.ifNoneMatch !== undefined || config.orderList.cache) {
    const reuseMs = request.bookmark === undefined ? config.orderList.versionReuseMs : 0;
    const version = versions.get(Date.now(), reuseMs) ?? (await readVersion(db, versions, request.began));
    if (request.ifNoneMatch !== undefined && ifNoneMatchMatches(request.ifNoneMatch, orderListEtag(version)))
      return { kind: "not-modified", version };
    if (config.orderList.cache) {
      const cached = await cachedOrderList(
        config.baseUrl,
        version,
        {
          background: context.background,
          onError: (error) => log("warn", "order list cache: not served from the cache", { error: String(error) }),
        },
        fills,
      );
      if (cached) return { kind: "list", version, ...cached };
    }
  }

  const first = await readFirstOrderPage(db);
  const version = versionOrFault(first.version);
  versions.remember(version, Date.now(), request.began);
  refuseOverBudget(first, config.subrequestLimit);
  const pages = pagesReadAhead(first, (after, upTo) => readOrderRange(db, after, upTo), config.orderList.readAhead);
  let ended!: (bytes: number) => void;
  const bytes = new Promise<number>((resolve) => (ended = resolve));
  const body = orderListStream(pages, {
    ended,
    aborted: (error) => log("error", "order list stream aborted", { error: String(error) }),
    // One line per request, however many rows are bad; the values themselves stay out of the logs.
    dropped: (values) => log("warn", ...droppedValuesWarning("order list", values)),
  });
  if (!config.orderList.cache || request.head) return { kind: "list", version, body, bytes };
  const filling = cachingOrderList(config.baseUrl, version, body, {
    background: context.background,
    bytes,
    fills,
    // The first page was read in one transaction with the version. Later
    // pages come from the same session, whose reads never go back in time:
    // if the version is unchanged after the last, every page was that version's.
    stillCurrent: async () => laterPageQueries(first) === 0 || (await readOrdersVersion(db)) === version,
    onError: (error) => log("warn", "order list cache: the list was not stored", { error: String(error) }),
  });
  return { kind: "list", version, body: filling, bytes };
}

/** The version from D1, remembered for lists without a bookmark, unless a cancel came after the read began. */
async function readVersion(db: D1DatabaseSession, versions: VersionMemory, began: number): Promise<string> {
  const version = versionOrFault(await readOrdersVersion(db));
  versions.remember(version, Date.now(), began);
  return version;
}

/**
 * The orders_version row is the list's only version: without it every list
 * would look like one version forever (cached, revalidated as unchanged). A
 * server fault, never a 200 or a 304.
 */
export function versionOrFault(version: string | undefined): string {
  if (version !== undefined) return version;
  // The cause is the request's error log line.
  throw new ApiError(
    "internal_error",
    "Something went wrong on our side. It has been logged.",
    {},
    new Error("the orders_version row is missing"),
  );
}

/**
 * A list that would need more D1 queries than one invocation may make would
 * be cut off mid-body; it is refused before its first byte instead
 * (docs/design/order-list.md#capacity).
 */
function refuseOverBudget(first: FirstOrderPage, subrequestLimit: number): void {
  const pages = 1 + laterPageQueries(first);
  const limit = subrequestLimit - OTHER_SUBREQUESTS;
  if (pages > limit) {
    throw new ApiError(
      "order_list_too_large",
      `The order list needs ${pages} reads of ${ORDER_PAGE_SIZE.toLocaleString("en")} orders, more than this ` +
        `deployment can make for one response (${limit}). ` +
        "Read it a page at a time with GET /v2/store/orders.",
    );
  }
}
