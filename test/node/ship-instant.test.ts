import { readD1Migrations, type D1Migration } from "@cloudflare/vitest-plugin";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { afterAll, describe, expect, it } from "vitest";
import { rfc3339ToUtc } from "../../src/lib/date-time";

/**
 * `ship_instant`, and its stored copy that ranges compare, as the schema
 * defines them (migrations/, docs/design/order-list.md#v2-pages): only a ship
 * date the write guards would accept matches a range, cut to the millisecond
 * as the list writes it, whatever another system wrote around the guards.
 */
const migrations = await readD1Migrations("migrations");

/**
 * One local runtime for the file, with a fresh database for each test: a runtime per test was most of the file's time.
 */
const DATABASES = Array.from({ length: 8 }, (_, index) => `DB${index}`);
/**
 * The databases are reached by requests to a worker of the runtime that runs the statements, not through
 * Miniflare's binding proxy: its synchronous round trips failed now and then on a busy machine (an assertion
 * in its SynchronousFetcher, in .ci/run beside a serving npm start).
 */
const SQL_RUNNER = `export default {
  async fetch(request, env) {
    const { db, statements, batch } = await request.json();
    const prepared = statements.map(({ sql, params }) => env[db].prepare(sql).bind(...params));
    return Response.json(batch ? await env[db].batch(prepared) : [await prepared[0].all()]);
  },
};`;
const runtime = new Miniflare(convertV4MiniflareOptions({ modules: true, script: SQL_RUNNER, d1Databases: DATABASES }));
afterAll(() => runtime.dispose());
let used = 0;

interface Statement {
  sql: string;
  params: unknown[];
}

/** The part of a D1 binding this file uses, over the runtime's worker. */
function database(): D1Database {
  const name = DATABASES[used++];
  if (!name) throw new Error("every database of the file's runtime is used: add one to DATABASES");
  const send = async (statements: Statement[], batch: boolean): Promise<D1Result[]> => {
    const response = await runtime.dispatchFetch("http://sql.local/", {
      method: "POST",
      body: JSON.stringify({ db: name, statements, batch }),
    });
    if (!response.ok) throw new Error(`the database refused: ${await response.text()}`);
    return (await response.json()) as D1Result[];
  };
  const statement = (sql: string, params: unknown[] = []) => ({
    sql,
    params,
    bind: (...values: unknown[]) => statement(sql, values),
    run: async () => (await send([{ sql, params }], false))[0]!,
    all: async () => (await send([{ sql, params }], false))[0]!,
  });
  return {
    prepare: (sql: string) => statement(sql),
    batch: (statements: Statement[]) =>
      send(
        statements.map(({ sql, params }) => ({ sql, params })),
        true,
      ),
  } as unknown as D1Database;
}

const apply = async (db: D1Database, migration: D1Migration) =>
  db.batch(migration.queries.map((query) => db.prepare(query)));

/** Rows as another system could write them without the write guards: (id, ship_date). The guards go for good. */
async function legacyRows(db: D1Database, rows: [number, unknown][]) {
  const { results } = await db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'orders_guard_%'")
    .all<{ name: string }>();
  for (const { name } of results) await db.prepare(`DROP TRIGGER ${name}`).run();
  for (const [id, shipDate] of rows) {
    await db
      .prepare(
        "INSERT INTO orders (id, ship_date, status, complete, created_at, updated_at) VALUES (?1, ?2, 'pending', 0, " +
          "'x', 'x')",
      )
      .bind(id, shipDate)
      .run();
  }
}

/** What a range matches: the stored copy, as pages compare it. */
const inRange = async (db: D1Database, from: string, to = "9999-12-31T23:59:59.999Z") =>
  (
    await db
      .prepare(
        "SELECT id FROM orders WHERE ship_instant_stored >= julianday(?1) AND ship_instant_stored < julianday(?2) " +
          "ORDER BY id",
      )
      .bind(from, to)
      .all<{ id: number }>()
  ).results.map((row) => row.id);

const LEGACY: [number, unknown][] = [
  [1, "2026-01-01T10:00:00Z"],
  [2, "2026-01-01"],
  [3, "2026-01-01T10:00:00"],
  [4, 2461041.5],
  [5, "2026-02-30T10:00:00Z"],
  [6, "2026-01-01T10:00:00.9996Z"],
  [7, "2026-01-01t11:00:00+01:00"],
  [8, null],
];

describe("ship_instant on rows the write guards would refuse", () => {
  it("matches only RFC 3339 instants: no 'now', date without a zone, number or impossible day in a range", async () => {
    const db = database();
    for (const migration of migrations) await apply(db, migration);
    await legacyRows(db, [...LEGACY, [9, "now"]]);
    expect(await inRange(db, "0000-01-01T00:00:00Z")).toEqual([1, 6, 7]);
  });

  it("cuts a fraction to the millisecond as the list does: a range never disagrees with the date listed", async () => {
    const db = database();
    for (const migration of migrations) await apply(db, migration);
    await legacyRows(db, [
      [6, "2026-01-01T10:00:00.9996Z"],
      [10, "2026-01-01T10:00:00.0005+00:00"],
    ]);
    // What the list writes for them.
    expect(rfc3339ToUtc("2026-01-01T10:00:00.9996Z")).toBe("2026-01-01T10:00:00.999Z");
    expect(rfc3339ToUtc("2026-01-01T10:00:00.0005+00:00")).toBe("2026-01-01T10:00:00.000Z");
    expect(await inRange(db, "2026-01-01T10:00:00.999Z", "2026-01-01T10:00:01.000Z")).toEqual([6]);
    expect(await inRange(db, "2026-01-01T10:00:01.000Z")).toEqual([]);
    expect(await inRange(db, "2026-01-01T10:00:00.000Z", "2026-01-01T10:00:00.001Z")).toEqual([10]);
  });

  it("agrees with the list's reading of every value: an instant exactly where JavaScript reads one, and the same instant", async () => {
    const db = database();
    for (const migration of migrations) await apply(db, migration);
    const values = [
      "2026-01-01T10:00:00Z",
      "2026-13-01T00:00:00Z",
      "2026-00-10T00:00:00Z",
      "2026-01-00T00:00:00Z",
      "2026-02-29T00:00:00Z",
      "2028-02-29T00:00:00Z",
      "2026-04-31T00:00:00Z",
      "2026-04-30T23:59:59.5-02:00",
      "0000-01-01T00:00:00+01:00",
      "0000-01-01T00:00:00-01:00",
      "9999-12-31T23:59:59Z",
      "9999-12-31T23:30:00-01:00",
      "2026-01-01T24:00:00Z",
      "2026-01-01T10:00:60Z",
      "2026-01-01T10:00:00+24:00",
      "2026-01-01T10:00:00.Z",
      "2026-01-01 10:00:00Z",
      "2026-1-01T10:00:00Z",
    ];
    await legacyRows(
      db,
      values.map((value, index) => [index + 1, value]),
    );
    const { results } = await db
      .prepare("SELECT id, ship_instant_stored AS instant, julianday(?1) AS epoch FROM orders ORDER BY id")
      .bind("1970-01-01T00:00:00Z")
      .all<{ id: number; instant: number | null; epoch: number }>();
    for (const row of results) {
      const value = values[row.id - 1]!;
      const listed = rfc3339ToUtc(value);
      expect(row.instant === null, value).toBe(listed === undefined);
      if (listed !== undefined)
        expect(Math.round((row.instant! - row.epoch) * 86_400_000), value).toBe(Date.parse(listed));
    }
  });

  it("cuts fractions in JavaScript by their digits, never by floating-point arithmetic", () => {
    for (let ms = 0; ms < 1000; ms++) {
      const digits = String(ms).padStart(3, "0");
      expect(rfc3339ToUtc(`2026-01-01T00:00:00.${digits}9Z`)).toBe(`2026-01-01T00:00:00.${digits}Z`);
    }
  });
});

describe("ship_instant_stored, kept by triggers", () => {
  const copies = async (db: D1Database) =>
    (
      await db
        .prepare(
          "SELECT id, ship_instant_stored IS ship_instant AS same, ship_instant_stored AS stored FROM " +
            "orders ORDER BY " +
            "id",
        )
        .all<{ id: number; same: number; stored: number | null }>()
    ).results;
  const events = async (db: D1Database) =>
    (
      await db
        .prepare("SELECT type, changed FROM order_events ORDER BY seq")
        .all<{ type: string; changed: string | null }>()
    ).results;

  it("follows every write of a ship date, and is set back when another system writes the copy itself, with no event of its own", async () => {
    const db = database();
    for (const migration of migrations) await apply(db, migration);
    const insert =
      "INSERT INTO orders (id, ship_date, status, complete, created_at, updated_at) VALUES (?1, ?2, 'pending', 0, " +
      "'x', 'x')";
    await db.prepare(insert).bind(1, "2026-01-01T10:00:00Z").run();
    await db.prepare(insert).bind(2, null).run();
    await db
      .prepare(
        "INSERT INTO orders (id, ship_date, status, complete, created_at, updated_at, " +
          "ship_instant_stored) VALUES (3, " +
          "'2026-01-01T10:00:00Z', 'pending', 0, 'x', 'x', 0)",
      )
      .run();
    expect(await inRange(db, "2026-01-01T10:00:00Z", "2026-01-01T10:00:00.001Z")).toEqual([1, 3]);

    await db.prepare("UPDATE orders SET ship_date = '2026-02-01T10:00:00+01:00' WHERE id = 1").run();
    await db.prepare("UPDATE orders SET ship_date = '2026-03-01T00:00:00Z' WHERE id = 2").run();
    await db.prepare("UPDATE orders SET ship_date = NULL WHERE id = 3").run();
    expect(await inRange(db, "2026-02-01T09:00:00Z", "2026-02-01T09:00:00.001Z")).toEqual([1]);
    expect(await inRange(db, "2026-03-01T00:00:00Z", "2026-03-01T00:00:00.001Z")).toEqual([2]);
    expect(await inRange(db, "0000-01-01T00:00:00Z")).toEqual([1, 2]);

    await db.prepare("UPDATE orders SET ship_instant_stored = 0 WHERE id = 1").run();
    await db.prepare("UPDATE orders SET ship_instant_stored = julianday('2026-01-01T00:00:00Z') WHERE id = 3").run();
    await db.prepare("UPDATE orders SET status = 'cancelled' WHERE id = 2").run();
    expect((await copies(db)).map((row) => row.same)).toEqual([1, 1, 1]);
    expect(await events(db)).toEqual([
      { type: "order.created", changed: null },
      { type: "order.created", changed: null },
      { type: "order.created", changed: null },
      { type: "order.updated", changed: "shipDate" },
      { type: "order.updated", changed: "shipDate" },
      { type: "order.updated", changed: "shipDate" },
      { type: "order.cancelled", changed: "status" },
    ]);
  });
});
