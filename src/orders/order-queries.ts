import { callDependency } from "../lib/call-dependency";
import type { D1Queryable } from "../lib/d1-session";
import { ApiError } from "../framework/api-error";
import { HELD_RETRY_AFTER_SECONDS, isHeldWrite } from "./order-writes-hold";

/**
 * An order as D1 gives it back. Integers are read as TEXT, since D1's doubles corrupt ids above 2^53; other systems
 * write this table too, so every optional column arrives as text and is checked before it is written.
 */
export interface OrderRow {
  id: string;
  petId: string | null;
  quantity: string | null;
  shipDate: string | null;
  status: string;
  complete: number;
}

/** Rows per D1 query while streaming the list: enough to amortise the round trip, few enough to keep memory flat. */
export const ORDER_PAGE_SIZE = 1000;

/** An order's cells as `.raw()` gives them, in ORDER_COLUMNS' order. */
export type OrderCells = [
  id: string,
  petId: string | null,
  quantity: string | null,
  shipDate: string | null,
  status: string,
  complete: number,
];

/** Rows built here from the cells: D1's `.all()` builds each object key by key, about 8% of a 100,000-order list. */
export const orderRows = (cells: [...OrderCells, ...unknown[]][]): OrderRow[] =>
  cells.map(([id, petId, quantity, shipDate, status, complete]) => ({
    id,
    petId,
    quantity,
    shipDate,
    status,
    complete,
  }));

export const ORDER_COLUMNS = `CAST(id AS TEXT) AS id, CAST(pet_id AS TEXT) AS petId,
  CAST(quantity AS TEXT) AS quantity, CAST(ship_date AS TEXT) AS shipDate, status, complete`;

// `orders.id`, qualified: a bare `id` in ORDER BY would sort by the TEXT alias.
const FIRST_PAGE_SQL = `SELECT ${ORDER_COLUMNS} FROM orders ORDER BY orders.id LIMIT ${ORDER_PAGE_SIZE}`;
// The id closing each full page, so the later pages are independent range reads, each read while the last is written.
const PAGE_ENDS_SQL = `SELECT CAST(id AS TEXT) AS id FROM
  (SELECT id, row_number() OVER (ORDER BY id) AS n FROM orders) WHERE n % ${ORDER_PAGE_SIZE} = 0 ORDER BY n`;
// Ids bound as strings (D1 rejects BigInt); the column's affinity compares them as integers, through the primary key.
const RANGE_SQL = `SELECT ${ORDER_COLUMNS} FROM orders WHERE orders.id > ?1 AND orders.id <= ?2 ORDER BY orders.id`;
const TAIL_SQL = `SELECT ${ORDER_COLUMNS} FROM orders WHERE orders.id > ?1 ORDER BY orders.id LIMIT ${ORDER_PAGE_SIZE}`;
export const VERSION_SQL =
  "SELECT epoch || '-' || version || '-' || stamp AS tag FROM orders_version WHERE singleton = 1";

/** The version of the whole order table, changed by triggers on every write; undefined when its row is missing. */
export async function readOrdersVersion(db: D1Queryable): Promise<string | undefined> {
  const tag = await callDependency("D1", () => db.prepare(VERSION_SQL).first<string>("tag"));
  return tag ?? undefined;
}

export interface FirstOrderPage {
  /** Undefined when the version row is missing. */
  version: string | undefined;
  rows: OrderRow[];
  /** The last id of each full page, the first page's included, ascending. */
  pageEnds: string[];
}

/** The version, the first page and where every page ends, in one round trip and one transaction. */
export async function readFirstOrderPage(db: D1Queryable): Promise<FirstOrderPage> {
  const [version, page, ends] = await callDependency("D1", () =>
    db.batch<unknown>([db.prepare(VERSION_SQL), db.prepare(FIRST_PAGE_SQL), db.prepare(PAGE_ENDS_SQL)]),
  );
  const tag = (version.results[0] as { tag: string } | undefined)?.tag;
  return {
    version: tag,
    rows: page.results as OrderRow[],
    pageEnds: (ends.results as { id: string }[]).map((row) => row.id),
  };
}

/** The orders after `after` up to and including `upTo`; without `upTo`, at most a page of them. */
export async function readOrderRange(db: D1Queryable, after: string, upTo: string | undefined): Promise<OrderRow[]> {
  const statement = upTo === undefined ? db.prepare(TAIL_SQL).bind(after) : db.prepare(RANGE_SQL).bind(after, upTo);
  return orderRows(await callDependency("D1", () => statement.raw<OrderCells>()));
}

export type CancelOutcome = "cancelled" | "already_cancelled" | "not_cancellable" | "not_found";

/**
 * Cancels a pending order with one guarded UPDATE and reads its status in the same batch, to say why nothing changed.
 * The guard makes concurrent cancels, and callDependency's retry, change the row once.
 */
export async function cancelPendingOrder(db: D1Queryable, id: string, now: string): Promise<CancelOutcome> {
  const [update, current] = await callDependency(
    "D1",
    () =>
      db.batch<{ status: string }>([
        db
          .prepare(
            `UPDATE orders SET status = 'cancelled', cancelled_at = ?2, updated_at = ?2
             WHERE id = ?1 AND status = 'pending'`,
          )
          .bind(id, now),
        db.prepare(`SELECT status FROM orders WHERE id = ?1`).bind(id),
      ]),
    { refusal: isHeldWrite },
  ).catch((error: unknown) => {
    if (!isHeldWrite(error)) throw error;
    throw new ApiError(
      "service_unavailable",
      "Order writes are paused while the orders database is restored. Retry later; nothing was changed.",
      {
        "Retry-After": String(HELD_RETRY_AFTER_SECONDS),
      },
    );
  });
  if (update.meta.changes > 0) return "cancelled";
  const status = current.results[0]?.status;
  if (status === undefined) return "not_found";
  return status === "cancelled" ? "already_cancelled" : "not_cancellable";
}
