/** D1 sessions: reads from the nearest copy at least as new as a bookmark; writes return theirs. */

/** What the data-access functions need from D1: a database or one session on it. */
export type D1Queryable = Pick<D1Database, "prepare" | "batch">;

export function readSession(db: D1Database, bookmark: string | undefined): D1DatabaseSession {
  return db.withSession(bookmark ?? "first-unconstrained");
}

export function writeSession(db: D1Database): D1DatabaseSession {
  return db.withSession("first-primary");
}
