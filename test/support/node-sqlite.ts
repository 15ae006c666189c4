import type { DatabaseSync } from "node:sqlite";

/** The part of a Durable Object's SqlStorage the account's classes use, over Node's in-memory SQLite. */
export function sqlStorage(db: DatabaseSync): SqlStorage {
  return {
    exec(query: string, ...bindings: (string | number | null)[]) {
      const statement = db.prepare(query);
      if (/^\s*SELECT/i.test(query)) {
        const rows = statement.all(...bindings);
        return { toArray: () => rows, one: () => rows[0], rowsWritten: 0 };
      }
      const { changes } = statement.run(...bindings);
      return { toArray: () => [], one: () => undefined, rowsWritten: Number(changes) };
    },
  } as unknown as SqlStorage;
}
