/** v2's order list query parameters (docs/api.md#v2-filtering-and-pagination), read strictly. */
import { rfc3339ToUtc } from "../../lib/date-time";
import { isCanonicalInt64 } from "../../lib/int64";
import { oneOrMoreOf, plainWholeNumber, strictQuery } from "../../framework/operations/strict-query";
import { ORDER_STATUSES } from "../order-schemas";

type OrderStatus = (typeof ORDER_STATUSES)[number];

/** The filters of a page, combined with AND. */
export interface OrderFilters {
  /** Any of these statuses; sorted, without repeats. */
  status?: OrderStatus[];
  /** A decimal int64, kept as text. */
  petId?: string;
  complete?: boolean;
  /** Instants in UTC (`YYYY-MM-DDTHH:mm:ss.sssZ`): from inclusive, to exclusive. */
  shipDateFrom?: string;
  shipDateTo?: string;
}

export interface OrderPageQuery {
  filters: OrderFilters;
  limit: number;
  cursor?: string;
}

export const DEFAULT_PAGE_LIMIT = 100;
export const MAX_PAGE_LIMIT = 1000;

/** What each parameter accepts, as the 400's message and the document say it. */
export const PARAMETERS = {
  status: `one or more of ${ORDER_STATUSES.join(", ")}, comma-separated`,
  petId: "a decimal 64-bit integer such as 42",
  complete: "true or false",
  shipDateFrom: "an RFC 3339 date-time such as 2026-01-01T00:00:00Z (inclusive)",
  shipDateTo: "an RFC 3339 date-time such as 2026-02-01T00:00:00Z (exclusive)",
  limit: `a whole number from 1 to ${MAX_PAGE_LIMIT} (default ${DEFAULT_PAGE_LIMIT})`,
  cursor: "the nextCursor of the previous page, as it was given",
} as const;

/** Reads a page's query from the request's search parameters. */
export function readOrderPageQuery(search: URLSearchParams): OrderPageQuery {
  const { value, invalid } = strictQuery(search, PARAMETERS);
  const filters: OrderFilters = {};

  const status = value("status");
  if (status !== undefined) {
    const statuses = oneOrMoreOf(status, ORDER_STATUSES);
    if (!statuses) throw invalid("status", status);
    filters.status = statuses;
  }
  const petId = value("petId");
  if (petId !== undefined) {
    if (!isCanonicalInt64(petId)) throw invalid("petId", petId);
    filters.petId = petId;
  }
  const complete = value("complete");
  if (complete !== undefined) {
    if (complete !== "true" && complete !== "false") throw invalid("complete", complete);
    filters.complete = complete === "true";
  }
  for (const bound of ["shipDateFrom", "shipDateTo"] as const) {
    const text = value(bound);
    if (text === undefined) continue;
    const instant = rfc3339ToUtc(text);
    if (instant === undefined) throw invalid(bound, text);
    filters[bound] = instant;
  }
  const limitText = value("limit") ?? String(DEFAULT_PAGE_LIMIT);
  const limit = plainWholeNumber(limitText, 1, MAX_PAGE_LIMIT);
  if (limit === undefined) throw invalid("limit", limitText);
  const cursor = value("cursor");
  return { filters, limit, ...(cursor !== undefined && { cursor }) };
}

/** The filters in one canonical order and spelling, for the cursor, the next link and the ETag. */
export function canonicalFilters(filters: OrderFilters): [string, string][] {
  const pairs: [string, string][] = [];
  if (filters.status) pairs.push(["status", filters.status.join(",")]);
  if (filters.petId !== undefined) pairs.push(["petId", filters.petId]);
  if (filters.complete !== undefined) pairs.push(["complete", String(filters.complete)]);
  if (filters.shipDateFrom !== undefined) pairs.push(["shipDateFrom", filters.shipDateFrom]);
  if (filters.shipDateTo !== undefined) pairs.push(["shipDateTo", filters.shipDateTo]);
  return pairs;
}
