/**
 * The dispatcher's mark (migrations/0001_baseline.sql): the last event
 * every endpoint that wanted it has been handed. Kept in D1 beside the
 * events, not in the dispatcher's own storage, so losing that storage never
 * sends every kept event again; it only grows.
 */
import type { D1Queryable } from "../lib/d1-session";

export const readDispatchMark = (db: D1Queryable) =>
  db.prepare("SELECT CAST(mark AS TEXT) AS mark FROM webhook_dispatch WHERE id = 1");

export async function storeDispatchMark(db: D1Queryable, mark: string): Promise<void> {
  await db.prepare("UPDATE webhook_dispatch SET mark = max(mark, CAST(?1 AS INTEGER)) WHERE id = 1").bind(mark).run();
}
