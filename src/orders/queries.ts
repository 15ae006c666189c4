import { callDependency } from "../lib/dependency";
import type { D1Queryable } from "../lib/d1-session";

/**
 * An order as D1 gives it back. Integer columns are read as TEXT because D1
 * hands integers to JavaScript as doubles, which corrupts ids above 2^53; the
 * other systems that write this table may have put any type in any column, so
 * every optional column arrives as text and is checked before it is written.
 */
export interface OrderRow {
  id: string;
  petId: string | null;
  quantity: string | null;
  shipDate: string | null;
  status: string;
  complete: number;
}

/** Rows per D1 query while streaming the list: big enough to amortise the round trip, small enough to keep memory flat. */
export const ORDER_PAGE_SIZE = 1000;

const ORDER_COLUMNS = `CAST(id AS TEXT) AS id, CAST(pet_id AS TEXT) AS petId,
  CAST(quantity AS TEXT) AS quantity, CAST(ship_date AS TEXT) AS shipDate, status, complete`;

// `orders.id`, qualified: a bare `id` in ORDER BY would sort by the TEXT alias.
const FIRST_PAGE_SQL = `SELECT ${ORDER_COLUMNS} FROM orders ORDER BY orders.id LIMIT ${ORDER_PAGE_SIZE}`;
// Ids are bound as strings (D1 rejects BigInt); the INTEGER column's affinity
// makes SQLite compare them as integers, so the primary key index is used.
const NEXT_PAGE_SQL = `SELECT ${ORDER_COLUMNS} FROM orders WHERE orders.id > ?1
  ORDER BY orders.id LIMIT ${ORDER_PAGE_SIZE}`;
const VERSION_SQL = `SELECT epoch || '-' || version AS tag FROM orders_version WHERE singleton = 1`;

/** The version of the whole order table, bumped by triggers on every write. */
export async function readOrdersVersion(db: D1Queryable): Promise<string> {
  const tag = await callDependency("D1", () => db.prepare(VERSION_SQL).first<string>("tag"));
  return tag ?? "none";
}

/** The version and the first page, read in one round trip and one transaction so the ETag describes that page. */
export async function readFirstOrderPage(db: D1Queryable): Promise<{ version: string; rows: OrderRow[] }> {
  const [version, page] = await callDependency("D1", () =>
    db.batch<unknown>([db.prepare(VERSION_SQL), db.prepare(FIRST_PAGE_SQL)]),
  );
  const tag = (version.results[0] as { tag: string } | undefined)?.tag ?? "none";
  return { version: tag, rows: page.results as OrderRow[] };
}

export async function readOrderPageAfter(db: D1Queryable, afterId: string): Promise<OrderRow[]> {
  const page = await callDependency("D1", () => db.prepare(NEXT_PAGE_SQL).bind(afterId).all<OrderRow>());
  return page.results;
}

export type CancelOutcome = "cancelled" | "already_cancelled" | "not_cancellable" | "not_found";

/**
 * Cancels a pending order with one guarded UPDATE, and reads the status in the
 * same batch (one round trip, one transaction) to tell the caller why nothing
 * changed. The guard makes concurrent cancels change the row exactly once, and
 * makes the retry inside callDependency safe.
 */
export async function cancelPendingOrder(db: D1Queryable, id: string, now: string): Promise<CancelOutcome> {
  const [update, current] = await callDependency("D1", () =>
    db.batch<{ status: string }>([
      db
        .prepare(
          `UPDATE orders SET status = 'cancelled', cancelled_at = ?2, updated_at = ?2
           WHERE id = ?1 AND status = 'pending'`,
        )
        .bind(id, now),
      db.prepare(`SELECT status FROM orders WHERE id = ?1`).bind(id),
    ]),
  );
  if (update.meta.changes > 0) return "cancelled";
  const status = current.results[0]?.status;
  if (status === undefined) return "not_found";
  return status === "cancelled" ? "already_cancelled" : "not_cancellable";
}
