/**
 * D1 sessions (read replication). Reads go to whichever copy is nearest,
 * unless the client sends back a bookmark, in which case D1 serves them from
 * a copy at least as new as that bookmark: the client reads its own writes.
 * Writes start at the primary, and their bookmark goes back to the client.
 */

/** What the data-access functions need from D1: a database or one session on it. */
export type D1Queryable = Pick<D1Database, "prepare" | "batch">;

export const BOOKMARK_HEADER = "X-D1-Bookmark";

// The format D1 hands out: four hex groups. Checked before it reaches D1, so a
// mangled header is the client's 400, not a D1 error that looks like an outage.
export const BOOKMARK_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

export function isBookmark(value: string): boolean {
  return BOOKMARK_PATTERN.test(value);
}

export function readSession(db: D1Database, bookmark: string | undefined): D1DatabaseSession {
  return db.withSession(bookmark ?? "first-unconstrained");
}

export function writeSession(db: D1Database): D1DatabaseSession {
  return db.withSession("first-primary");
}
