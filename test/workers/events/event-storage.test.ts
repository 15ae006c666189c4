import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { EVENT_ROW_BYTES } from "../../../src/events/prune-order-events";
import { laneOf } from "../../../src/webhook-delivery/lane-calls";
import { LANE_ATTEMPT_BYTES, LANE_DELIVERY_BYTES, LOG_ENTRY_BYTES } from "../../../src/webhook-delivery/lane-retention";
import { appendToLog, LOG_BLOCK_ENTRIES, type LoggedDelivery } from "../../../src/webhook-delivery/lane-log";

/**
 * What each kept row costs, measured on the real schema (the migrations, the
 * lane's tables) with rows as the code writes them: the figures of the
 * capacity table (docs/design/order-events.md#capacity) and of the prune's
 * account. A figure in the code below what is measured would let the tables
 * outgrow their budget; one far above it would waste it.
 */
const ROWS = 20_000;

/** An event as the triggers write an update's: the order after and before, what changed. */
const EVENT_ROWS = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS})
  INSERT INTO order_events (type, created_at, order_id, order_row, previous_row, changed)
  SELECT 'order.shipped', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 1000000000 + i,
    json_object('id', CAST(1000000000 + i AS TEXT), 'petId', CAST(4000 + i % 977 AS TEXT), 'quantity', '2',
      'shipDate', '2026-11-20T09:30:00.000Z', 'status', 'shipped', 'complete', 0),
    json_object('id', CAST(1000000000 + i AS TEXT), 'petId', CAST(4000 + i % 977 AS TEXT), 'quantity', '2',
      'shipDate', '2026-11-20T09:30:00.000Z', 'status', 'pending', 'complete', 0),
    'status' FROM n`;

describe("what the pipeline keeps, per row", () => {
  it("an order event costs the orders database no more than EVENT_ROW_BYTES, its indexes included", async () => {
    const before = (await env.DB.prepare("SELECT 1").run()).meta.size_after;
    await env.DB.prepare(EVENT_ROWS).run();
    const after = (await env.DB.prepare("SELECT 1").run()).meta.size_after;
    const perEvent = (after - before) / ROWS;
    console.log(`bytes per event: ${perEvent.toFixed(1)}`);
    expect(perEvent).toBeLessThanOrEqual(EVENT_ROW_BYTES);
    expect(perEvent).toBeGreaterThan(EVENT_ROW_BYTES * 0.75);
  });

  it("a delivery and an attempt cost their lane no more than LANE_DELIVERY_BYTES and LANE_ATTEMPT_BYTES", async () => {
    const { delivery, attempt } = await runInDurableObject(laneOf(env, "we_00000000000000000001"), (_, state) => {
      const sql = state.storage.sql;
      const empty = sql.databaseSize;
      const now = Date.now();
      sql.exec(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS})
         INSERT INTO deliveries (seq, outcome, attempts, schedule_step, last_status, last_error, due_at,
           created_at, updated_at)
         SELECT 1000000000 + i, 'delivered', 1, 0, 200, NULL, NULL, ? + i, ? + i + 180 FROM n`,
        now,
        now,
      );
      const withDeliveries = sql.databaseSize;
      sql.exec(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS})
         INSERT INTO attempts (seq, at, status, duration_ms, response, error) SELECT 1000000000 + i, ? + i,
           200, 180, '{"received":true}', NULL FROM n`,
        now,
      );
      return { delivery: (withDeliveries - empty) / ROWS, attempt: (sql.databaseSize - withDeliveries) / ROWS };
    });
    console.log(`bytes per delivery: ${delivery.toFixed(1)}, per attempt: ${attempt.toFixed(1)}`);
    expect(delivery).toBeLessThanOrEqual(LANE_DELIVERY_BYTES);
    expect(delivery).toBeGreaterThan(LANE_DELIVERY_BYTES * 0.75);
    expect(attempt).toBeLessThanOrEqual(LANE_ATTEMPT_BYTES);
    expect(attempt).toBeGreaterThan(LANE_ATTEMPT_BYTES * 0.75);
  });

  it("a delivery that went through at its first try costs its lane's log no more than LOG_ENTRY_BYTES", async () => {
    const perEntry = await runInDurableObject(laneOf(env, "we_00000000000000000002"), (_, state) => {
      const sql = state.storage.sql;
      const empty = sql.databaseSize;
      const now = Date.now();
      // Flushed 5 at a time, as a busy lane's runs do, into full blocks.
      for (let seq = 1_000_000_000; seq < 1_000_000_000 + ROWS; seq += 5) {
        const entries = Array.from(
          { length: 5 },
          (_, i): LoggedDelivery => [seq + i, now + seq, 200, 180, '{"received":true}'],
        );
        appendToLog(sql, entries, seq - 1, seq + 4);
      }
      return (sql.databaseSize - empty) / ROWS;
    });
    console.log(`bytes per log entry: ${perEntry.toFixed(1)} (blocks of ${LOG_BLOCK_ENTRIES})`);
    expect(perEntry).toBeLessThanOrEqual(LOG_ENTRY_BYTES);
    expect(perEntry).toBeGreaterThan(LOG_ENTRY_BYTES * 0.75);
  });
});
