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
