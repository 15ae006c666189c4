/**
 * D1 sessions (read replication). Reads go to whichever copy is nearest,
 * unless the client sends back a bookmark, in which case D1 serves them from
 * a copy at least as new as that bookmark: the client reads its own writes.
 * Writes start at the primary, and their bookmark goes back to the client.
 */

/** What the data-access functions need from D1: a database or one session on it. */
export type D1Queryable = Pick<D1Database, "prepare" | "batch">;

export function readSession(db: D1Database, bookmark: string | undefined): D1DatabaseSession {
  return db.withSession(bookmark ?? "first-unconstrained");
}

export function writeSession(db: D1Database): D1DatabaseSession {
  return db.withSession("first-primary");
}
