/**
 * `npm run stress`'s other system: it writes orders straight to D1 while the
 * service is under load, as a warehouse or back office would (never through
 * the Worker), and remembers each change it made and the event it must
 * appear as (docs/design/order-events.md#capture). Its orders have ids of
 * their own, apart from the ones the API's cancels target.
 */
import type { Execute } from "./d1-http-api";
import type { ExpectedChange } from "./stress-checks";

export interface ExternalWrites {
  /** Every change, in the order it was made; a no-op update appears nowhere. */
  changes: ExpectedChange[];
  /** Statements run, each writing one row (no-op updates included): each moves the list's version. */
  statements: number;
}

type Status = "pending" | "shipped" | "delivered" | "cancelled";

/** Writes one change after another, each to a row that exists (or a new one), until `stop()` says so. */
export async function writeExternally(
  execute: Execute,
  options: { firstId: number; stop(): boolean; pauseMs: number },
): Promise<ExternalWrites> {
  const live = new Map<number, Status>();
  const result: ExternalWrites = { changes: [], statements: 0 };
  let nextId = options.firstId;
  const now = () => new Date().toISOString();
  const run = async (sql: string, ...values: (string | number)[]) => {
    await execute(sql, values.map(String));
    result.statements += 1;
  };
  const anyWith = (status?: Status) => {
    const ids = [...live].filter(([, s]) => !status || s === status).map(([id]) => id);
    return ids.length ? ids[Math.floor(Math.random() * ids.length)] : undefined;
  };
  const change = (type: string, id: number) => result.changes.push({ type, orderId: String(id) });
  const setStatus = async (id: number | undefined, status: Status) => {
    if (id === undefined) return;
    await run("UPDATE orders SET status = ?2, updated_at = ?3 WHERE id = ?1", id, status, now());
    live.set(id, status);
    change(`order.${status}`, id);
  };

  while (!options.stop()) {
    const roll = Math.random();
    if (live.size < 20 || roll < 0.25) {
      const id = nextId++;
      await run(
        "INSERT INTO orders (id, pet_id, quantity, status, complete, created_at, updated_at) VALUES (?1, 7, 1, " +
          "'pending', 0, ?2, ?2)",
        id,
        now(),
      );
      live.set(id, "pending");
      change("order.created", id);
    } else if (roll < 0.45) {
      const id = anyWith()!;
      await run("UPDATE orders SET quantity = quantity + 1, updated_at = ?2 WHERE id = ?1", id, now());
      change("order.updated", id);
    } else if (roll < 0.55) {
      // Changes nothing: the list's version moves, no event is appended.
      await run("UPDATE orders SET quantity = quantity WHERE id = ?1", anyWith()!);
    } else if (roll < 0.65) {
      await setStatus(anyWith("pending"), "shipped");
    } else if (roll < 0.72) {
      await setStatus(anyWith("shipped"), "delivered");
    } else if (roll < 0.8) {
      await setStatus(anyWith("pending"), "cancelled");
    } else if (roll < 0.9) {
      const id = anyWith()!;
      await run("DELETE FROM orders WHERE id = ?1", id);
      live.delete(id);
      change("order.deleted", id);
    }
    await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
  }
  return result;
}
