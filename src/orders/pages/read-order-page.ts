/** v2's order list a page at a time: cursor checked, page and version in one transaction, an ETag a page. */
import { sha256Hex } from "../../lib/digest";
import { ifNoneMatchMatches } from "../../lib/etag";
import { decodeCursor, encodeCursor } from "./order-cursor";
import { canonicalFilters, type OrderPageQuery } from "./order-filters";
import { orderWriter, type DroppedValue } from "../order-json";
import { versionOrFault } from "../whole-list/read-order-list";
import { readOrderPageAfter } from "./page-queries";
import { readOrdersVersion } from "../order-queries";

export interface OrderPageRequest {
  query: OrderPageQuery;
  ifNoneMatch: string | undefined;
}

export interface OrderPageContext {
  db: D1DatabaseSession;
  /** The absolute URL of this operation, for the next page's link. */
  listUrl: string;
  /** Values the writer left out (docs/design/order-list.md#data-model), for one log line. */
  dropped(values: DroppedValue[]): void;
}

export type OrderPageResult =
  | { kind: "not-modified"; etag: string }
  | { kind: "page"; etag: string; body: string; next?: string };

/** The page's query in canonical form: its filters, limit and cursor. */
function canonicalQuery(query: OrderPageQuery): URLSearchParams {
  return new URLSearchParams([
    ...canonicalFilters(query.filters),
    ["limit", String(query.limit)],
    ...(query.cursor === undefined ? [] : [["cursor", query.cursor] as [string, string]]),
  ]);
}

const pageEtag = async (version: string, query: OrderPageQuery) =>
  `"orders-${version}-${await sha256Hex(canonicalQuery(query).toString(), 8)}"`;

export async function readOrderPage(request: OrderPageRequest, context: OrderPageContext): Promise<OrderPageResult> {
  const { query } = request;
  const { db } = context;
  const after = query.cursor === undefined ? undefined : await decodeCursor(query.cursor, query.filters);
  // A revalidation reads one row: the page's ETag changes with the list's version.
  if (request.ifNoneMatch !== undefined) {
    const etag = await pageEtag(versionOrFault(await readOrdersVersion(db)), query);
    if (ifNoneMatchMatches(request.ifNoneMatch, etag)) return { kind: "not-modified", etag };
  }
  const read = await readOrderPageAfter(db, query.filters, after, query.limit + 1);
  const etag = await pageEtag(versionOrFault(read.version), query);
  const rows = read.rows.slice(0, query.limit);
  const more = read.rows.length > query.limit;
  // A short page goes on from where a bounded scan stopped.
  const nextAfter = more ? rows.at(-1)!.id : read.scannedTo;
  const nextCursor = nextAfter === undefined ? null : await encodeCursor(nextAfter, query.filters);
  const dropped: DroppedValue[] = [];
  const write = orderWriter(dropped, "v2");
  const body = `{"data":[${rows.map(write).join(",")}],"nextCursor":${JSON.stringify(nextCursor)}}`;
  if (dropped.length > 0) context.dropped(dropped);
  if (nextCursor === null) return { kind: "page", etag, body };
  const next = new URLSearchParams([
    ...canonicalFilters(query.filters),
    ["limit", String(query.limit)],
    ["cursor", nextCursor],
  ]);
  return { kind: "page", etag, body, next: `${context.listUrl}?${next}` };
}
