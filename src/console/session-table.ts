/** The console_sessions table's statements. Apart from the cookie, so ending a session needs no secret. */
import { pruneLinks } from "../console-kit/sign-in-links";

export type SessionVia = "key" | "link";

export interface SessionRow {
  id: string;
  keyId: string;
  account: string;
  via: SessionVia;
  createdAt: string;
  expiresAt: string;
}

export const insertSession = (db: D1Database, row: SessionRow): D1PreparedStatement =>
  db
    .prepare(
      "INSERT INTO console_sessions (id, key_id, budget, via, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )
    .bind(row.id, row.keyId, row.account, row.via, row.createdAt, row.expiresAt);

/** Ends one session, if it has not ended. */
export const endSession = (db: D1Database, id: string, at: string): D1PreparedStatement =>
  db.prepare("UPDATE console_sessions SET ended_at = ?2 WHERE id = ?1 AND ended_at IS NULL").bind(id, at);

/** Whether a session is still open: its row is there and not ended. */
export async function isSessionOpen(db: D1Database, id: string): Promise<boolean> {
  const row = await db
    .prepare("SELECT ended_at FROM console_sessions WHERE id = ?1")
    .bind(id)
    .first<{ ended_at: string | null }>();
  return row !== null && row.ended_at === null;
}

/** Rows a day past their end: sessions and links no one can use any more (the daily cron). */
export async function pruneConsoleSessions(db: D1Database, now: number): Promise<void> {
  const before = new Date(now - 86_400_000).toISOString();
  await db.batch([
    db.prepare("DELETE FROM console_sessions WHERE expires_at < ?1").bind(before),
    pruneLinks(db, before),
  ]);
}
