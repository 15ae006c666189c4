/**
 * Hosts an operator locked: every statement on that table. A lock holds while `lifted_at` is null, and the endpoints'
 * statements check it in the statement that writes, so none is missed.
 */
import type { D1Queryable } from "../lib/d1-session";

export interface HostLock {
  host: string;
  reason: string | null;
  locked_at: string;
  locked_by: string;
}

/** The condition, on a host bound as the statement's `?n`, that it is locked now. */
export const HOST_LOCKED = (parameter: number) =>
  `EXISTS (SELECT 1 FROM host_locks WHERE host = ?${parameter} AND lifted_at IS NULL)`;

export const hostLock = (db: D1Queryable, host: string) =>
  db
    .prepare("SELECT host, reason, locked_at, locked_by FROM host_locks WHERE host = ?1 AND lifted_at IS NULL")
    .bind(host)
    .first<HostLock>();

/** Locks a host, or locks it again with a new reason after a lift. */
export async function lockHost(
  db: D1Queryable,
  host: string,
  reason: string | null,
  at: string,
  actor: string,
): Promise<void> {
  await db
    .prepare(
      "INSERT INTO host_locks (host, reason, locked_at, locked_by) VALUES (?1, ?2, ?3, ?4) " +
        "ON CONFLICT (host) DO UPDATE SET reason = excluded.reason, locked_at = CASE WHEN lifted_at IS NULL THEN " +
        "locked_at ELSE excluded.locked_at END, " +
        "locked_by = CASE WHEN lifted_at IS NULL THEN locked_by ELSE excluded.locked_by END, lifted_at = NULL, " +
        "lifted_by = NULL",
    )
    .bind(host, reason, at, actor)
    .run();
}

/** Lifts a host's lock; false when it had none in force. */
export async function liftHostLock(db: D1Queryable, host: string, at: string, actor: string): Promise<boolean> {
  const { meta } = await db
    .prepare("UPDATE host_locks SET lifted_at = ?2, lifted_by = ?3 WHERE host = ?1 AND lifted_at IS NULL")
    .bind(host, at, actor)
    .run();
  return meta.changes === 1;
}

/** The endpoints whose URL names the host anywhere, for the caller to narrow. */
export const endpointsNaming = (db: D1Queryable, host: string) =>
  db
    .prepare("SELECT id, url FROM webhook_endpoints WHERE instr(url, ?1) > 0")
    .bind(`//${host}`)
    .all<{ id: string; url: string }>();
