/**
 * v2's reads (docs/design/order-list.md#v2-pages): a page of the matching orders after an id, in id order, one row more
 * than the page to say whether another follows; and one order by id. Each page reads through the index that starts with
 * exactly its equality filters, then `id`, so it reads about a page's rows at any table size; several statuses are one
 * arm each, merged by id. A ship date range scans a bounded stretch of each arm's index and keeps the rows in range, so
 * a page may come back short, with where its scan reached as the next start.
 */
import { callDependency } from "../../lib/call-dependency";
import type { D1Queryable } from "../../lib/d1-session";
import type { OrderFilters } from "./order-filters";
import { ORDER_COLUMNS, VERSION_SQL, orderRows, type OrderCells, type OrderRow } from "../order-queries";

const INT64_MIN = "-9223372036854775808";
const INT64_MAX = "9223372036854775807";

/** A page's columns: the order's and its position. */
const PAGE_COLUMNS = ORDER_COLUMNS.split(",").length + 1;

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

/** The index a page with these filters reads through; undefined for the primary key. */
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

/**
 * A page's statement: orders matching `filters` after `after`, at most `rows`, then a last row with every order column
 * NULL and the list's version as `tag`: one read, its cells raw. With a ship date range, each arm's frontier (the last
 * id its bounded scan reaches) is found once and bounds its read; the lowest comes back as `scanned_to`.
 */
export function pageSql(filters: OrderFilters, after: string | undefined, rows: number): Statement {
  const index = pageIndex(filters);
  const from = `orders${index ? ` INDEXED BY ${index}` : ""}`;
  const scanRows = RANGE_SCAN_FACTOR * rows;
  const statuses = filters.status ?? [undefined];
  return statement((bind) => {
    /** An arm's equality filters and the keyset start; ids bound as text (D1 rejects BigInt), compared as integers. */
    const keyed = (status: string | undefined) => [
      ...(status === undefined ? [] : [`status = ${bind(status)}`]),
      ...(filters.petId === undefined ? [] : [`pet_id = ${bind(filters.petId)}`]),
      ...(filters.complete === undefined ? [] : [`complete = ${bind(filters.complete ? 1 : 0)}`]),
      after === undefined ? `orders.id >= ${bind(INT64_MIN)}` : `orders.id > ${bind(after)}`,
    ];
    const range = () => [
      ...(filters.shipDateFrom === undefined
        ? []
        : [`ship_instant_stored >= julianday(${bind(filters.shipDateFrom)})`]),
      ...(filters.shipDateTo === undefined ? [] : [`ship_instant_stored < julianday(${bind(filters.shipDateTo)})`]),
    ];
    // With a range, the arm reads its index in id order up to its frontier, and stops as soon as the page is full.
    const arm = (status: string | undefined, armIndex: number) =>
      `SELECT ${ORDER_COLUMNS}, orders.id AS position FROM ${from} WHERE ${[
        ...keyed(status),
        ...(hasRange(filters)
          ? [`orders.id <= coalesce((SELECT last FROM frontier${armIndex}), ${INT64_MAX})`, ...range()]
          : []),
      ].join(" AND ")} ORDER BY orders.id LIMIT ${rows}`;
    const page =
      statuses.length === 1
        ? arm(statuses[0], 0)
        : `${statuses.map((status, i) => `SELECT * FROM (${arm(status, i)})`).join(" UNION ALL ")} ` +
          `ORDER BY position LIMIT ${rows}`;
    const blanks = Array.from({ length: PAGE_COLUMNS }, () => "NULL").join(", ");
    // The page as it is read (no copy, no second sort), then its last row.
    const withLastRow = (scannedTo: string) =>
      `SELECT *, NULL AS scanned_to, NULL AS tag FROM (${page}) UNION ALL SELECT ${blanks}, ${scannedTo}, ` +
      `(${VERSION_SQL})`;
    if (!hasRange(filters)) return withLastRow("NULL");
    // Each frontier once (MATERIALIZED: referenced twice, it would be found twice), from the index alone.
    const frontiers = statuses.map(
      (status, i) =>
        `frontier${i} AS MATERIALIZED (SELECT (SELECT orders.id FROM ${from} WHERE ${keyed(status).join(" AND ")} ` +
        `ORDER BY orders.id LIMIT 1 OFFSET ${scanRows - 1}) AS last)`,
    );
    const lasts = statuses.map((_, i) => `SELECT last FROM frontier${i}`).join(" UNION ALL ");
    const lowest = `SELECT CAST(min(last) AS TEXT) FROM (${lasts})`;
    return `WITH ${frontiers.join(", ")} ${withLastRow(`(${lowest})`)}`;
  });
}

export interface OrderPageRead {
  /** The list's version the page was read at; undefined when its row is missing. */
  version: string | undefined;
  rows: OrderRow[];
  /**
   * Set when a bounded scan stopped before the end of its index: every order up to this id was looked at, none after.
   */
  scannedTo?: string;
}

/** A page's cells: an order's, its position, and on the last row only, where the scan stopped and the version. */
type PageCells = [...OrderCells, position: string | null, scannedTo: string | null, tag: string | null];

/** The version and a page in one statement. */
export async function readOrderPageAfter(
  db: D1Queryable,
  filters: OrderFilters,
  after: string | undefined,
  rows: number,
): Promise<OrderPageRead> {
  const { sql, values } = pageSql(filters, after, rows);
  const cells = await callDependency("D1", () =>
    db
      .prepare(sql)
      .bind(...values)
      .raw<PageCells>(),
  );
  const [, , , , , , , cut, tag] = cells.pop()!;
  const read = { version: tag ?? undefined, rows: orderRows(cells) };
  // An arm whose scan was cut short looked at nothing past its last id: the page keeps what every arm looked at.
  if (cut === null) return read;
  // Rows come in id order: when the last is within the scan, so is every one (a full page of a wide range, as a rule).
  const last = read.rows.at(-1);
  const limit = BigInt(cut);
  const scanned =
    last === undefined || BigInt(last.id) <= limit ? read.rows : read.rows.filter((row) => BigInt(row.id) <= limit);
  return { ...read, rows: scanned, scannedTo: cut };
}

/** One order by id, or undefined. */
export async function readOrder(db: D1Queryable, id: string): Promise<OrderRow | undefined> {
  const row = await callDependency("D1", () =>
    db.prepare(`SELECT ${ORDER_COLUMNS} FROM orders WHERE orders.id = ?1`).bind(id).first<OrderRow>(),
  );
  return row ?? undefined;
}
