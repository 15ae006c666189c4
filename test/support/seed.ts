import { env } from "cloudflare:workers";

export type OrderStatus = "pending" | "shipped" | "delivered" | "cancelled";

export interface SeedOrder {
  id: bigint | number | string;
  petId?: bigint | number | string | null;
  quantity?: number | null;
  shipDate?: string | null;
  status?: OrderStatus;
  complete?: boolean;
}

const INSERT_ORDER = `INSERT INTO orders (id, pet_id, quantity, ship_date, status, complete, created_at, updated_at)
  VALUES (?1, ?2, ?3, ?4, ?5, ?6, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`;

/** Inserts orders through D1 the way an order-placing system would; ids go in as text to keep int64 exact. */
export async function seedOrders(orders: SeedOrder[]): Promise<void> {
  const statements = orders.map((order) =>
    env.DB.prepare(INSERT_ORDER).bind(
      String(order.id),
      order.petId == null ? null : String(order.petId),
      order.quantity ?? null,
      order.shipDate ?? null,
      order.status ?? "pending",
      order.complete ? 1 : 0,
    ),
  );
  for (let i = 0; i < statements.length; i += 500) {
    await env.DB.batch(statements.slice(i, i + 500));
  }
}

/** Seeds ids 1..count with statuses cycling pending, shipped, delivered, cancelled. */
export async function seedManyOrders(count: number): Promise<void> {
  const chunk = 5000;
  for (let start = 1; start <= count; start += chunk) {
    // One recursive INSERT per chunk seeds tens of thousands of rows in well under a second.
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
       INSERT INTO orders (id, pet_id, quantity, status, complete, created_at, updated_at)
       SELECT i, i % 97, 1 + i % 5,
         CASE i % 4 WHEN 1 THEN 'pending' WHEN 2 THEN 'shipped' WHEN 3 THEN 'delivered' ELSE 'cancelled' END,
         0, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z' FROM n`,
    )
      .bind(start, Math.min(count, start + chunk - 1))
      .run();
  }
}

export async function clearOrders(): Promise<void> {
  await env.DB.prepare("DELETE FROM orders").run();
}

export async function orderStatus(id: bigint | number | string): Promise<string | null> {
  return env.DB.prepare("SELECT status FROM orders WHERE id = ?1").bind(String(id)).first<string>("status");
}

export async function ordersVersion(): Promise<number> {
  return (await env.DB.prepare("SELECT version FROM orders_version").first<number>("version")) ?? 0;
}

/** Any value SQLite can hold, as D1 binds it: null, integer, real, text or blob. */
export type SqliteValue = null | number | string | ArrayBuffer;

export interface RawOrder {
  id: string;
  petId: SqliteValue;
  quantity: SqliteValue;
  shipDate: SqliteValue;
  status: OrderStatus;
  complete: 0 | 1;
}

/** The statement that inserts a row exactly as given, as another system writing SQL would. */
export const rawOrderInsert = (order: RawOrder): D1PreparedStatement =>
  env.DB.prepare(INSERT_ORDER).bind(
    order.id,
    order.petId,
    order.quantity,
    order.shipDate,
    order.status,
    order.complete,
  );

/** Inserts the row; throws when a write guard refuses it. */
export async function insertRawOrder(order: RawOrder): Promise<void> {
  await rawOrderInsert(order).run();
}

/**
 * Runs `write` with the write guards dropped, as on a table another system wrote without them, then puts them back
 * exactly as the schema made them.
 */
export async function withoutWriteGuards<T>(write: () => Promise<T>): Promise<T> {
  const { results } = await env.DB.prepare(
    "SELECT name, sql FROM sqlite_master WHERE (type = 'trigger' AND name LIKE 'orders_guard_%') OR " +
      "name LIKE 'orders_ship_date_rule%' ORDER BY type = 'trigger', rowid",
  ).all<{ name: string; sql: string }>();
  await env.DB.batch([
    ...results
      .filter(({ sql }) => sql.startsWith("CREATE TRIGGER"))
      .map(({ name }) => env.DB.prepare(`DROP TRIGGER ${name}`)),
    env.DB.prepare("DROP TABLE orders_ship_date_rule"),
  ]);
  try {
    return await write();
  } finally {
    await env.DB.batch(results.map(({ sql }) => env.DB.prepare(sql)));
  }
}
