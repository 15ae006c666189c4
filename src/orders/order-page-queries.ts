/**
 * v2's reads (docs/design/order-list.md#v2-pages): a page of the orders that
 * match the filters, after a given id, in id order, LIMIT page size + 1 (the
 * extra row says whether there is a next page); and one order by id. Each
 * page names the index that starts with exactly its equality filters, then
 * `id` (migrations/0005_order_filter_indexes.sql), so it reads about a page's
 * rows whatever the table's size. Several statuses are one arm each, merged
 * by id: each arm reads at most a page. A ship date range cannot be read in
 * id order through an index, so with one each arm scans a bounded number of
 * rows of its index in id order and keeps those in the range: a page costs a
 * page however wide or sparse the range, and may come back short, with the
 * place its scan reached as the next page's start.
 */
import { callDependency } from "../lib/dependency";
import type { D1Queryable } from "../lib/d1-session";
import type { OrderFilters } from "./order-filters";
import { ORDER_COLUMNS, VERSION_SQL, type OrderRow } from "./order-queries";

const INT64_MIN = "-9223372036854775808";
const INT64_MAX = "9223372036854775807";

/** With a ship date range, each arm scans at most this many rows of its index per row the page asks for. */
export const RANGE_SCAN_FACTOR = 4;

/** The index for a set of equality filters (sorted names). */
const INDEXES: Record<string, string> = {
  status: "orders_by_status",
  petId: "orders_by_pet",
  complete: "orders_by_complete",
  "petId,status": "orders_by_status_pet",
  "complete,status": "orders_by_status_complete",
  "complete,petId": "orders_by_pet_complete",
  "complete,petId,status": "orders_by_status_pet_complete",
};

/** The index a page with these filters reads through (the ship date range does not choose it); undefined for the primary key. */
export function pageIndex(filters: OrderFilters): string | undefined {
  const equalities = (["status", "petId", "complete"] as const).filter((name) => filters[name] !== undefined).sort();
  return INDEXES[equalities.join(",")];
}

const hasRange = (filters: OrderFilters) => filters.shipDateFrom !== undefined || filters.shipDateTo !== undefined;

export interface Statement {
  sql: string;
  values: (string | number)[];
}

/** A statement whose placeholders are numbered as `build` binds its values. */
function statement(build: (bind: (value: string | number) => string) => string): Statement {
  const values: (string | number)[] = [];
  const sql = build((value) => `?${values.push(value)}`);
  return { sql, values };
}

export interface PagePlan {
  /** The page: orders matching the filters after `after`, in id order, at most `rows`. */
  page: Statement;
  /** With a ship date range: per arm, the last id its bounded scan reaches (NULL when it reaches the end). */
  scans: Statement[];
}

/** The statements of a page: orders matching `filters` after `after` (from the start when undefined), at most `rows`. */
export function pageSql(filters: OrderFilters, after: string | undefined, rows: number): PagePlan {
  const index = pageIndex(filters);
  const from = `orders${index ? ` INDEXED BY ${index}` : ""}`;
  const scanRows = RANGE_SCAN_FACTOR * rows;
  /** The equality filters of one arm, and the keyset start; ids are bound as text (D1 rejects BigInt), compared as integers by the column's affinity. */
  const keyed = (bind: (value: string | number) => string, status: string | undefined) => [
    ...(status === undefined ? [] : [`status = ${bind(status)}`]),
    ...(filters.petId === undefined ? [] : [`pet_id = ${bind(filters.petId)}`]),
    ...(filters.complete === undefined ? [] : [`complete = ${bind(filters.complete ? 1 : 0)}`]),
    after === undefined ? `orders.id >= ${bind(INT64_MIN)}` : `orders.id > ${bind(after)}`,
  ];
  const range = (bind: (value: string | number) => string) => [
    ...(filters.shipDateFrom === undefined ? [] : [`ship_instant >= julianday(${bind(filters.shipDateFrom)})`]),
    ...(filters.shipDateTo === undefined ? [] : [`ship_instant < julianday(${bind(filters.shipDateTo)})`]),
  ];
  /** The last id one arm's bounded scan reaches (its index's entries only); NULL when fewer remain: the scan reaches the end. */
  const frontier = (bind: (value: string | number) => string, status: string | undefined) =>
    `SELECT orders.id FROM ${from} WHERE ${keyed(bind, status).join(" AND ")} ORDER BY orders.id LIMIT 1 OFFSET ${scanRows - 1}`;
  // With a range, the arm reads its index in id order up to its frontier, and stops as soon as the page is full.
  const arm = (bind: (value: string | number) => string, status: string | undefined) =>
    `SELECT ${ORDER_COLUMNS}, orders.id AS position FROM ${from} WHERE ${[
      ...keyed(bind, status),
      ...(hasRange(filters) ? [`orders.id <= coalesce((${frontier(bind, status)}), ${INT64_MAX})`, ...range(bind)] : []),
    ].join(" AND ")} ORDER BY orders.id LIMIT ${rows}`;
  const statuses = filters.status ?? [undefined];
  const page = statement((bind) =>
    statuses.length === 1
      ? arm(bind, statuses[0])
      : `${statuses.map((status) => `SELECT * FROM (${arm(bind, status)})`).join(" UNION ALL ")} ORDER BY position LIMIT ${rows}`,
  );
  const scans = hasRange(filters) ? statuses.map((status) => statement((bind) => `SELECT CAST((${frontier(bind, status)}) AS TEXT) AS last`)) : [];
  return { page, scans };
}

export interface OrderPageRead {
  /** The list's version the page was read at; undefined when its row is missing. */
  version: string | undefined;
  rows: OrderRow[];
  /**
   * Set when a bounded scan stopped before the end of its index: every order
   * up to this id has been looked at, none after it. A page that is not full
   * goes on from here.
   */
  scannedTo?: string;
}

/** The version and a page in one round trip and one transaction. */
export async function readOrderPageAfter(db: D1Queryable, filters: OrderFilters, after: string | undefined, rows: number): Promise<OrderPageRead> {
  const plan = pageSql(filters, after, rows);
  const prepared = [plan.page, ...plan.scans].map(({ sql, values }) => db.prepare(sql).bind(...values));
  const [version, page, ...scans] = await callDependency("D1", () => db.batch<unknown>([db.prepare(VERSION_SQL), ...prepared]));
  const read = { version: (version!.results[0] as { tag: string } | undefined)?.tag, rows: page!.results as OrderRow[] };
  // An arm whose scan was cut short has looked at nothing past its last id; the page holds only what every arm has looked at.
  const cuts = scans.map((result) => (result.results[0] as { last: string | null }).last).flatMap((last) => (last === null ? [] : [BigInt(last)]));
  if (cuts.length === 0) return read;
  const scannedTo = cuts.reduce((low, cut) => (cut < low ? cut : low));
  return { ...read, rows: read.rows.filter((row) => BigInt(row.id) <= scannedTo), scannedTo: String(scannedTo) };
}

/** One order by id, or undefined. */
export async function readOrder(db: D1Queryable, id: string): Promise<OrderRow | undefined> {
  const row = await callDependency("D1", () => db.prepare(`SELECT ${ORDER_COLUMNS} FROM orders WHERE orders.id = ?1`).bind(id).first<OrderRow>());
  return row ?? undefined;
}
