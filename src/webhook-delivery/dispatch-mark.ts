/** The dispatcher's mark: the last event handed to every endpoint wanting it, kept in D1 with the events. */
import type { D1Queryable } from "../lib/d1-session";

export const readDispatchMark = (db: D1Queryable) =>
  db.prepare("SELECT CAST(mark AS TEXT) AS mark FROM webhook_dispatch WHERE id = 1");

export async function storeDispatchMark(db: D1Queryable, mark: string): Promise<void> {
  await db.prepare("UPDATE webhook_dispatch SET mark = max(mark, CAST(?1 AS INTEGER)) WHERE id = 1").bind(mark).run();
}
