import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import worker from "../../../src/app/worker";
import { EVENT_RETENTION_MS } from "../../../src/events/prune-order-events";
import { beforeEach, describe, expect, it } from "vitest";
import { orderEventJson, type OrderEventRow } from "../../../src/events/order-event-json";
import type { DroppedValue } from "../../../src/orders/order-json";
import { api } from "../../support/request";
import { clearOrders, seedOrders } from "../../support/seed";

/**
 * Order events captured at the source (docs/design/order-events.md): the
 * triggers of migrations/0001_baseline.sql append one event per change to
 * a row of orders, whoever writes it (here mostly SQL, as another system
 * would), in the same transaction; the Worker writes each as JSON with the
 * list's writer.
 */
let before = 0;
beforeEach(async () => {
  await clearOrders();
  before = (await env.DB.prepare("SELECT coalesce(max(seq), 0) AS seq FROM order_events").first<number>("seq"))!;
});

/** The events appended since the test began, as clients would receive them. */
async function events(): Promise<Record<string, unknown>[]> {
  const { results } = await env.DB.prepare(
    "SELECT CAST(seq AS TEXT) AS seq, type, created_at, order_row, previous_row, changed FROM order_events WHERE seq " +
      "> ?1 ORDER BY seq",
  )
    .bind(before)
    .all<OrderEventRow>();
  const dropped: DroppedValue[] = [];
  return results.map((row) => JSON.parse(orderEventJson(row, dropped)) as Record<string, unknown>);
}

const sql = (statement: string, ...values: unknown[]) =>
  env.DB.prepare(statement)
    .bind(...values)
    .run();

describe("order events, captured by triggers", () => {
  it("appends order.created for an insert, with the order exactly as v2's pages write it (int64s as strings)", async () => {
    await seedOrders([
      {
        id: 9223372036854775807n,
        petId: 9007199254740993n,
        quantity: 2,
        shipDate: "2026-03-01T10:00:00+01:00",
        status: "pending",
      },
    ]);
    const [created, ...rest] = await events();
    expect(rest).toEqual([]);
    expect(created).toEqual({
      id: expect.stringMatching(/^evt_\d+$/),
      type: "order.created",
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      order: {
        id: "9223372036854775807",
        petId: "9007199254740993",
        quantity: 2,
        shipDate: "2026-03-01T09:00:00.000Z",
        status: "pending",
        complete: false,
      },
    });
  });

  it("names a status change by the new status, and any other change order.updated, with the old values of what changed", async () => {
    await seedOrders([{ id: 1, petId: 5, quantity: 1, status: "pending" }]);
    before = (await env.DB.prepare("SELECT max(seq) AS seq FROM order_events").first<number>("seq"))!;
    expect((await api("/v1/store/orders/1", { method: "DELETE" })).status).toBe(204);
    await sql("UPDATE orders SET status = 'shipped' WHERE id = 1");
    await sql("UPDATE orders SET status = 'delivered', complete = 1 WHERE id = 1");
    await sql("UPDATE orders SET status = 'pending' WHERE id = 1");
    await sql("UPDATE orders SET quantity = 3, ship_date = '2026-05-01T00:00:00Z' WHERE id = 1");
    await sql("UPDATE orders SET updated_at = 'later' WHERE id = 1");
    const seen = await events();
    expect(seen.map((event) => [event.type, event.previous])).toEqual([
      ["order.cancelled", { status: "pending" }],
      ["order.shipped", { status: "cancelled" }],
      ["order.delivered", { status: "shipped", complete: false }],
      ["order.updated", { status: "delivered" }],
      // No ship date before: null says it was set.
      ["order.updated", { quantity: 1, shipDate: null }],
      // A change of the table's own columns only: an event, no Order field changed.
      ["order.updated", {}],
    ]);
    expect(seen[4]!.order).toMatchObject({ quantity: 3, shipDate: "2026-05-01T00:00:00.000Z", status: "pending" });
    const ids = seen.map((event) => BigInt(String(event.id).slice("evt_".length)));
    expect(ids).toEqual([...ids].sort((a, b) => (a < b ? -1 : 1)));
  });

  it("appends nothing for an update that changes nothing, a cancel of a cancelled order, or a write the guards refuse", async () => {
    await seedOrders([{ id: 1, status: "cancelled" }]);
    before = (await env.DB.prepare("SELECT max(seq) AS seq FROM order_events").first<number>("seq"))!;
    await sql("UPDATE orders SET status = status, quantity = quantity WHERE id = 1");
    expect((await api("/v1/store/orders/1", { method: "DELETE" })).status).toBe(204);
    await expect(sql("UPDATE orders SET pet_id = 'not a number' WHERE id = 1")).rejects.toThrow(/pet_id/);
    await expect(
      sql(
        "INSERT INTO orders (id, pet_id, status, complete, created_at, updated_at) VALUES (2, 'x', " +
          "'pending', 0, 'x', " +
          "'x')",
      ),
    ).rejects.toThrow(/pet_id/);
    expect(await events()).toEqual([]);
  });

  it("appends order.deleted with the order as it was, and one event per row for a write of many", async () => {
    await seedOrders([{ id: 1, status: "shipped" }, { id: 2 }, { id: 3 }]);
    before = (await env.DB.prepare("SELECT max(seq) AS seq FROM order_events").first<number>("seq"))!;
    await sql("UPDATE orders SET complete = 1 WHERE id >= 2");
    await sql("DELETE FROM orders WHERE id = 1");
    expect((await events()).map((event) => [event.type, (event.order as { id: string }).id])).toEqual([
      ["order.updated", "2"],
      ["order.updated", "3"],
      ["order.deleted", "1"],
    ]);
    expect((await events())[2]!.order).toMatchObject({ status: "shipped" });
  });

  it("captures another system's INSERT OR REPLACE of an existing order as the change it is, and an ignored insert as nothing", async () => {
    await seedOrders([{ id: 3, petId: 7, quantity: 1, status: "pending" }]);
    const replace = (status: string, quantity: number) =>
      sql(
        "INSERT OR REPLACE INTO orders (id, pet_id, quantity, status, complete, created_at, updated_at) " +
          "VALUES (3, 7, " +
          "?2, ?1, 1, '2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z')",
        status,
        quantity,
      );
    await replace("delivered", 1);
    // The same row again: nothing changed, nothing appended.
    await replace("delivered", 1);
    await replace("delivered", 4);
    await sql(
      "INSERT OR IGNORE INTO orders (id, pet_id, quantity, status, complete, created_at, updated_at) " +
        "VALUES (3, 9, 9, " +
        "'pending', 0, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
    );
    // A new order by REPLACE is a creation.
    await sql(
      "INSERT OR REPLACE INTO orders (id, pet_id, quantity, status, complete, created_at, updated_at) VALUES (4, 7, " +
        "1, 'pending', 0, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')",
    );
    const appended = await events();
    expect(appended.map((event) => [event.type, (event.order as { id: unknown }).id, event.previous])).toEqual([
      ["order.created", "3", undefined],
      ["order.delivered", "3", { status: "pending", complete: false }],
      ["order.updated", "3", { quantity: 1 }],
      ["order.created", "4", undefined],
    ]);
  });

  it("calls an insert whose id SQLite assigns a creation, after an ignored insert or an upsert that changed nothing (migrations/0020)", async () => {
    await seedOrders([{ id: 1, status: "pending" }]);
    before = (await env.DB.prepare("SELECT max(seq) AS seq FROM order_events").first<number>("seq"))!;
    const row = "(?1, 7, 1, 'shipped', 0, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')";
    const columns = "(id, pet_id, quantity, status, complete, created_at, updated_at)";
    await sql(`INSERT OR IGNORE INTO orders ${columns} VALUES ${row}`, 1);
    await sql(`INSERT INTO orders ${columns} VALUES ${row} ON CONFLICT (id) DO NOTHING`, 1);
    // The kept row of order 1 was left behind by both; order 1 is deleted, and SQLite gives the next insert id 1 again.
    await sql("DELETE FROM orders WHERE id = 1");
    await sql(`INSERT INTO orders ${columns} VALUES ${row}`, null);
    const appended = await events();
    expect(appended.map((event) => [event.type, (event.order as { id: string }).id, event.previous])).toEqual([
      ["order.deleted", "1", undefined],
      ["order.created", "1", undefined],
    ]);
  });

  it("records the order an UPDATE OR REPLACE overwrites by moving another onto its id as deleted, then the move", async () => {
    await seedOrders([
      { id: 1, status: "pending" },
      { id: 2, status: "shipped" },
    ]);
    before = (await env.DB.prepare("SELECT max(seq) AS seq FROM order_events").first<number>("seq"))!;
    await sql("UPDATE OR REPLACE orders SET id = 2 WHERE id = 1");
    const appended = await events();
    expect(
      appended.map((event) => [
        event.type,
        (event.order as { id: string; status: string }).id,
        (event.order as { status: string }).status,
      ]),
    ).toEqual([
      ["order.deleted", "2", "shipped"],
      ["order.updated", "2", "pending"],
    ]);
    // An UPDATE OR IGNORE that conflicts changes nothing, and records nothing.
    await seedOrders([{ id: 3 }]);
    before = (await env.DB.prepare("SELECT max(seq) AS seq FROM order_events").first<number>("seq"))!;
    await sql("UPDATE OR IGNORE orders SET id = 3 WHERE id = 2");
    await sql("DELETE FROM orders WHERE id = 3");
    expect((await events()).map((event) => [event.type, (event.order as { id: string }).id])).toEqual([
      ["order.deleted", "3"],
    ]);
  });

  it("records one event for a REPLACE with recursive triggers on, as with them off", async () => {
    await seedOrders([{ id: 3, petId: 7, quantity: 1, status: "pending" }, { id: 4 }, { id: 5, status: "shipped" }]);
    before = (await env.DB.prepare("SELECT max(seq) AS seq FROM order_events").first<number>("seq"))!;
    await env.DB.batch([
      env.DB.prepare("PRAGMA recursive_triggers = ON"),
      env.DB.prepare(
        "INSERT OR REPLACE INTO orders (id, pet_id, quantity, status, complete, created_at, updated_at) " +
          "VALUES (3, 7, " +
          "1, 'delivered', 1, '2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z')",
      ),
      env.DB.prepare("UPDATE OR REPLACE orders SET id = 5 WHERE id = 4"),
      env.DB.prepare("DELETE FROM orders WHERE id = 3"),
      env.DB.prepare("PRAGMA recursive_triggers = OFF"),
    ]);
    const appended = await events();
    expect(appended.map((event) => [event.type, (event.order as { id: string }).id])).toEqual([
      ["order.delivered", "3"],
      ["order.deleted", "5"],
      ["order.updated", "5"],
      ["order.deleted", "3"],
    ]);
  });

  it("leaves out of an event what the list leaves out of the order, and notes it", async () => {
    await sql("DROP TRIGGER orders_guard_insert");
    await sql(
      "INSERT INTO orders (id, pet_id, quantity, status, complete, created_at, updated_at) VALUES (7, 'seven', 2.5, " +
        "'pending', 0, 'x', 'x')",
    );
    const { results } = await env.DB.prepare(
      "SELECT CAST(seq AS TEXT) AS seq, type, created_at, order_row, previous_row, changed FROM order_events WHERE " +
        "seq > ?1",
    )
      .bind(before)
      .all<OrderEventRow>();
    const dropped: DroppedValue[] = [];
    expect(JSON.parse(orderEventJson(results[0]!, dropped)).order).toEqual({
      id: "7",
      status: "pending",
      complete: false,
    });
    expect(dropped).toEqual([
      { orderId: "7", column: "pet_id" },
      { orderId: "7", column: "quantity" },
    ]);
  });
});

describe("order events, kept 30 days", () => {
  it("are pruned by the daily cron once older than that, oldest first, and no sooner, the pruned part marked", async () => {
    const now = Date.UTC(2030, 5, 1, 3, 17);
    const at = (ms: number) => new Date(ms).toISOString();
    // Events come in time order: those before these are older still.
    await sql("UPDATE order_events SET created_at = ?1 WHERE seq < 900001", at(now - EVENT_RETENTION_MS - 120_000));
    for (const [seq, createdAt] of [
      [900_001, at(now - EVENT_RETENTION_MS - 60_000)],
      [900_002, at(now - EVENT_RETENTION_MS - 1)],
      [900_003, at(now - EVENT_RETENTION_MS + 1)],
      [900_004, at(now - 1_000)],
    ] as const) {
      await sql(
        "INSERT INTO order_events (seq, type, created_at, order_id, order_row) VALUES (?1, 'order.created', ?2, 1, " +
          "'{}')",
        seq,
        createdAt,
      );
    }
    const ctx = createExecutionContext();
    worker.scheduled(createScheduledController({ scheduledTime: now, cron: "17 3 * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
    const { results } = await env.DB.prepare("SELECT seq FROM order_events WHERE seq > 900000 ORDER BY seq").all<{
      seq: number;
    }>();
    expect(results.map((row) => row.seq)).toEqual([900_003, 900_004]);
    // The feed's mark moved with the delete: a cursor before 900,002 is expired, one at it is not.
    expect(await env.DB.prepare("SELECT pruned_through FROM order_event_retention").first("pruned_through")).toBe(
      900_002,
    );
  });
});
