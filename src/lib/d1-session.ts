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

/**
 * The bookmark of the latest write through this isolate, for `keepMs`: reads
 * that carry no bookmark of their own read at least that new, so whoever
 * cancelled through this isolate never lists from a replica that has not
 * seen the cancel yet.
 */
export class LatestWrite {
  #latest: { bookmark: string; at: number } | undefined;

  constructor(private readonly keepMs: number) {}

  note(bookmark: string | null, now: number): void {
    if (bookmark !== null) this.#latest = { bookmark, at: now };
  }

  /** The bookmark to read at least as new as, if a write was noted within `keepMs`. */
  floor(now: number): string | undefined {
    return this.#latest && now - this.#latest.at < this.keepMs ? this.#latest.bookmark : undefined;
  }
}
