/**
 * v2's reads (docs/design/order-list.md#v2-pages): a page of the orders that
 * match the filters, after a given id, in id order, LIMIT page size + 1 (the
 * extra row says whether there is a next page); and one order by id. Each
 * page names the index that starts with exactly its equality filters, then
 * `id` (migrations/0005_order_filter_indexes.sql), so it reads about a page's
 * rows whatever the table's size. Several statuses are one arm each, merged
 * by id: each arm reads at most a page. A shipDate range reads its range
 * through the ship date index instead.
 */
import { callDependency } from "../lib/dependency";
import type { D1Queryable } from "../lib/d1-session";
import type { OrderFilters } from "./order-filters";
import { ORDER_COLUMNS, VERSION_SQL, type OrderRow } from "./order-queries";

const INT64_MIN = "-9223372036854775808";

/** The index for a set of equality filters (sorted names), or for a ship date range. */
const INDEXES: Record<string, string> = {
  status: "orders_by_status",
  petId: "orders_by_pet",
  complete: "orders_by_complete",
  "petId,status": "orders_by_status_pet",
  "complete,status": "orders_by_status_complete",
  "complete,petId": "orders_by_pet_complete",
  "complete,petId,status": "orders_by_status_pet_complete",
};
const SHIP_INDEX = "orders_by_ship_instant";

/** The index a page with these filters reads through; undefined for the primary key. */
export function pageIndex(filters: OrderFilters): string | undefined {
  if (filters.shipDateFrom !== undefined || filters.shipDateTo !== undefined) return SHIP_INDEX;
  const equalities = (["status", "petId", "complete"] as const).filter((name) => filters[name] !== undefined).sort();
  return INDEXES[equalities.join(",")];
}

/** The SQL and bound values of a page: orders matching `filters` after `after` (from the start when undefined), at most `rows`. */
export function pageSql(filters: OrderFilters, after: string | undefined, rows: number): { sql: string; values: (string | number)[] } {
  const values: (string | number)[] = [];
  const bind = (value: string | number) => `?${values.push(value)}`;
  const shared: string[] = [];
  if (filters.petId !== undefined) shared.push(`pet_id = ${bind(filters.petId)}`);
  if (filters.complete !== undefined) shared.push(`complete = ${bind(filters.complete ? 1 : 0)}`);
  if (filters.shipDateFrom !== undefined) shared.push(`ship_instant >= julianday(${bind(filters.shipDateFrom)})`);
  if (filters.shipDateTo !== undefined) shared.push(`ship_instant < julianday(${bind(filters.shipDateTo)})`);
  // Ids are bound as text (D1 rejects BigInt); the INTEGER column's affinity compares them as integers.
  shared.push(after === undefined ? `orders.id >= ${bind(INT64_MIN)}` : `orders.id > ${bind(after)}`);
  const index = pageIndex(filters);
  const from = `orders${index ? ` INDEXED BY ${index}` : ""}`;
  const arm = (status: string | undefined) =>
    `SELECT ${ORDER_COLUMNS}, orders.id AS position FROM ${from} WHERE ${[...(status === undefined ? [] : [`status = ${bind(status)}`]), ...shared].join(" AND ")} ORDER BY orders.id LIMIT ${rows}`;
  const statuses = filters.status ?? [undefined];
  if (statuses.length === 1) return { sql: arm(statuses[0]), values };
  const sql = `${statuses.map((status) => `SELECT * FROM (${arm(status)})`).join(" UNION ALL ")} ORDER BY position LIMIT ${rows}`;
  return { sql, values };
}

export interface OrderPageRead {
  /** The list's version the page was read at; undefined when its row is missing. */
  version: string | undefined;
  rows: OrderRow[];
}

/** The version and a page in one round trip and one transaction. */
export async function readOrderPageAfter(db: D1Queryable, filters: OrderFilters, after: string | undefined, rows: number): Promise<OrderPageRead> {
  const { sql, values } = pageSql(filters, after, rows);
  const [version, page] = await callDependency("D1", () => db.batch<unknown>([db.prepare(VERSION_SQL), db.prepare(sql).bind(...values)]));
  return { version: (version.results[0] as { tag: string } | undefined)?.tag, rows: page.results as OrderRow[] };
}

/** One order by id, or undefined. */
export async function readOrder(db: D1Queryable, id: string): Promise<OrderRow | undefined> {
  const row = await callDependency("D1", () => db.prepare(`SELECT ${ORDER_COLUMNS} FROM orders WHERE orders.id = ?1`).bind(id).first<OrderRow>());
  return row ?? undefined;
}
