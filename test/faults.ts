import { env } from "cloudflare:workers";

/** Bindings that fail the way Cloudflare's can, for the outage tests. */

/** A D1 binding whose every call fails, as when D1 is unreachable. */
export function failingD1(): { db: D1Database; calls: () => number } {
  let calls = 0;
  const fail = () => {
    calls += 1;
    return Promise.reject(new Error("D1_ERROR: Network connection lost. SELECT secret FROM orders"));
  };
  const statement = { bind: () => statement, first: fail, all: fail, run: fail, raw: fail };
  const db = { prepare: () => statement, batch: fail, exec: fail, withSession: () => db, getBookmark: () => null } as unknown as D1Database;
  return { db, calls: () => calls };
}

/** The real D1 binding (and its sessions), with batch() replaced: to fail, lose answers or delay, around the real call. */
export function withBatch(
  batch: (target: Pick<D1Database, "batch">, statements: D1PreparedStatement[]) => Promise<D1Result[]>,
): D1Database {
  const wrap = <T extends D1Database | D1DatabaseSession>(real: T): T =>
    new Proxy(real, {
      get(target, property) {
        if (property === "withSession") return (constraint: string) => wrap((target as D1Database).withSession(constraint));
        if (property === "batch") return (statements: D1PreparedStatement[]) => batch(target, statements);
        const value = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  return wrap(env.DB);
}
