import { defineOperation } from "../../framework/operations/define-operation";
import { documentedParameters } from "../../framework/operations/strict-query";
import { readSession } from "../../lib/d1-session";
import { CANONICAL_INTEGER } from "../../lib/int64";
import type { OwnWrites } from "../../read-your-writes/own-writes";
import { logLine } from "../../lib/log";
import { API_VERSIONS, versionBaseUrl } from "../../framework/service-identity";
import { bookmarkHeader, bookmarkOf } from "../../read-your-writes/d1-bookmark";
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, PARAMETERS, readOrderPageQuery } from "./order-filters";
import { CURSOR_PATTERN } from "../../lib/opaque-cursor";
import { readOrderPage } from "./read-order-page";
import { droppedValuesWarning } from "../order-json";
import { ORDER_STATUSES, OrderPage } from "../order-schemas";
import { textBody } from "../../framework/counted-body";

/** Each query parameter's JSON schema in the document; readOrderPageQuery() is what enforces them. */
const QUERY_SCHEMAS: Record<keyof typeof PARAMETERS, Record<string, unknown>> = {
  status: { type: "string", pattern: `^(${ORDER_STATUSES.join("|")})(,(${ORDER_STATUSES.join("|")}))*$` },
  // A string, as v2 writes every int64 (docs/api.md#int64-ids-in-v2).
  petId: { type: "string", format: "int64", pattern: CANONICAL_INTEGER.source },
  complete: { type: "boolean" },
  shipDateFrom: { type: "string", format: "date-time" },
  shipDateTo: { type: "string", format: "date-time" },
  limit: { type: "integer", minimum: 1, maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT },
  cursor: { type: "string", minLength: 1, maxLength: 200, pattern: CURSOR_PATTERN },
};

/** `GET /v2/store/orders`: the matching orders, a page at a time. */
export const listOrdersV2 = (ownWrites: OwnWrites) =>
  defineOperation({
    operationId: "listOrdersV2",
    scope: "orders:read",
    method: "get",
    path: "/store/orders",
    summary: "List orders, filtered, a page at a time",
    tag: "Orders",
    description:
      "The orders that match every filter given, ascending by id, a page at a time. Pages are keyed by id, not by " +
      "offset: an order that exists and matches during a whole walk appears exactly once, whatever is inserted, " +
      'cancelled or shipped meanwhile. Follow nextCursor (or the Link rel="next") with the same filters until it is ' +
      "null. An unknown, repeated or unparseable parameter is 400 invalid_query. Each page has an ETag; send the " +
      "X-D1-Bookmark of an earlier response to read data at least as new as it saw.",
    stability: "beta",
    queryParameters: documentedParameters(PARAMETERS, QUERY_SCHEMAS),
    responses: {
      200: { description: "A page of orders", body: OrderPage, headers: ["ETag", "X-D1-Bookmark", "Link"] },
      304: {
        description: "Not Modified: an ETag in If-None-Match is this page's, as the list stands now. No body.",
        headers: ["ETag", "X-D1-Bookmark"],
      },
    },
    requestHeaders: ["If-None-Match", "X-D1-Bookmark"],
    errors: ["invalid_query", "invalid_cursor", "invalid_bookmark"],
    async handle(c) {
      const query = readOrderPageQuery(new URL(c.req.url).searchParams);
      const bookmark = bookmarkOf(c);
      const db = readSession(c.env.DB, ownWrites.floor(bookmark, Date.now()));
      const requestId = c.get("requestId");
      const page = await readOrderPage(
        { query, ifNoneMatch: c.req.header("If-None-Match") },
        {
          db,
          listUrl: `${versionBaseUrl(c.get("config").baseUrl, API_VERSIONS.v2)}/store/orders`,
          dropped: (values) => logLine("warn", requestId, ...droppedValuesWarning("order page", values)),
        },
      );
      const headers = { ETag: page.etag, ...bookmarkHeader(db) };
      if (page.kind === "not-modified") return c.body(null, 304, headers);
      return textBody(c, page.body, 200, {
        "Content-Type": "application/json",
        ...headers,
        ...(page.next && { Link: `<${page.next}>; rel="next"` }),
      });
    },
  });
