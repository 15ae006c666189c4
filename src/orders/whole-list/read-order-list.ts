/**
 * The whole order list as one pipeline (docs/design/order-list.md#the-cache): the version, a 304, the cached body, or
 * the pages read ahead through the schema's writer, filling the cache in the same pass. Plain inputs and outputs; the
 * operation maps them to HTTP.
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

/** Subrequests a list leaves to the rest of its request (key read, limiter, cache, version reads). */
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

/** A list's body and its size: known for a cached one, once streamed for one read now. */
export type OrderList =
  | { kind: "not-modified"; version: string }
  | { kind: "list"; version: string; body: ReadableStream<Uint8Array>; bytes: number | Promise<number> };

export const orderListEtag = (version: string) => `"orders-${version}"`;

export async function readOrderList(request: OrderListRequest, context: OrderListContext): Promise<OrderList> {
  const { db, config, log, versions, fills } = context;
  // The version first when it can save the list; otherwise version and first page in one round trip.
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
    // Later pages come from the session of the first, which never goes back in time: an unchanged version after the
    // last means every page was that version's.
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
 * Without the orders_version row every list would look like one version forever: a server fault, never a 200 or 304.
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
 * A list needing more D1 queries than an invocation may make is refused before its first byte, not cut off mid-body.
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
