import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { EVENT_ROW_BYTES } from "../../../src/events/prune-order-events";
import { laneOf } from "../../../src/webhook-delivery/lane-calls";
import {
  LOG_ENTRY_BYTES,
  LOG_ENTRY_MAX_BYTES,
  PENDING_ROW_BYTES,
  REPLAY_ROW_BYTES,
  SETTLED_ENTRY_BYTES,
} from "../../../src/webhook-delivery/lane-retention";
import { addReplay } from "../../../src/webhook-delivery/lane-replays";
import type { LaneAttempt } from "../../../src/webhook-delivery/lane-attempts";
import { addTried } from "../../../src/webhook-delivery/lane-deliveries";
import {
  appendSettled,
  appendToLog,
  LOG_BLOCK_ENTRIES,
  type LoggedDelivery,
} from "../../../src/webhook-delivery/lane-log";

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

  it("a delivery refused once costs its lane no more than PENDING_ROW_BYTES pending and SETTLED_ENTRY_BYTES settled", async () => {
    const { pending, settled } = await runInDurableObject(laneOf(env, "we_00000000000000000001"), (_, state) => {
      const sql = state.storage.sql;
      const empty = sql.databaseSize;
      const now = Date.now();
      const refused = (seq: number): LaneAttempt => [now + seq, 503, 180, "busy", "the receiver answered 503"];
      for (let seq = 1_000_000_000; seq < 1_000_000_000 + ROWS; seq++)
        addTried(sql, seq, refused(seq), now + seq + 10_000, now + seq, now + seq);
      const withRows = sql.databaseSize;
      sql.exec("DELETE FROM pending_deliveries");
      // Settled 5 at a time, each with its refusal and the answer that took it, into full blocks.
      for (let seq = 1_000_000_000; seq < 1_000_000_000 + ROWS; seq += 5)
        appendSettled(
          sql,
          Array.from({ length: 5 }, (_, i) => ({
            seq: seq + i,
            outcome: "delivered" as const,
            attempts: 2,
            lastStatus: 200,
            lastError: null,
            createdAt: now + seq,
            settledAt: now + seq + 10_000,
            attemptLog: [refused(seq + i), [now + seq + 10_000, 200, 180, '{"received":true}', null] as LaneAttempt],
          })),
        );
      return { pending: (withRows - empty) / ROWS, settled: (sql.databaseSize - withRows) / ROWS };
    });
    console.log(`bytes per pending row: ${pending.toFixed(1)}, per settled entry: ${settled.toFixed(1)}`);
    expect(pending).toBeLessThanOrEqual(PENDING_ROW_BYTES);
    expect(pending).toBeGreaterThan(PENDING_ROW_BYTES * 0.75);
    expect(settled).toBeLessThanOrEqual(SETTLED_ENTRY_BYTES);
    expect(settled).toBeGreaterThan(SETTLED_ENTRY_BYTES * 0.75);
  });

  /** Bytes a log entry costs its lane, flushed 5 at a time, as a busy lane's runs do, into full blocks. */
  const perLogEntry = (lane: string, answer: string) =>
    runInDurableObject(laneOf(env, lane), (_, state) => {
      const sql = state.storage.sql;
      const empty = sql.databaseSize;
      const now = Date.now();
      for (let seq = 1_000_000_000; seq < 1_000_000_000 + ROWS; seq += 5) {
        const entries = Array.from({ length: 5 }, (_, i): LoggedDelivery => [seq + i, now + seq, 200, 180, answer]);
        appendToLog(sql, { delivered: entries, from: seq - 1, through: seq + 4 });
      }
      return (sql.databaseSize - empty) / ROWS;
    });

  it("a delivery that went through at its first try costs its lane's log no more than LOG_ENTRY_BYTES", async () => {
    const perEntry = await perLogEntry("we_00000000000000000002", '{"received":true}');
    console.log(`bytes per log entry: ${perEntry.toFixed(1)} (blocks of ${LOG_BLOCK_ENTRIES})`);
    expect(perEntry).toBeLessThanOrEqual(LOG_ENTRY_BYTES);
    expect(perEntry).toBeGreaterThan(LOG_ENTRY_BYTES * 0.75);
  });

  it("one whose receiver answered all the 256 characters kept, quotes in them, no more than LOG_ENTRY_MAX_BYTES", async () => {
    const page = '<p class="ok">accepted</p>'.repeat(20).slice(0, 256);
    const perEntry = await perLogEntry("we_00000000000000000004", page);
    console.log(`bytes per log entry, a 256-character answer: ${perEntry.toFixed(1)}`);
    expect(perEntry).toBeLessThanOrEqual(LOG_ENTRY_MAX_BYTES);
    expect(perEntry).toBeGreaterThan(LOG_ENTRY_MAX_BYTES * 0.75);
  });

  it("a recovered range costs its lane one row of no more than REPLAY_ROW_BYTES, however many events it holds", async () => {
    const perReplay = await runInDurableObject(laneOf(env, "we_00000000000000000003"), (_, state) => {
      const sql = state.storage.sql;
      const empty = sql.databaseSize;
      const now = Date.now();
      // Ranges of a thousand events each, one left out of each as delivered on its own.
      for (let n = 0; n < ROWS; n++) {
        const after = 1_000_000_000 + n * 1_000;
        addReplay(sql, after, after + 1_000, [after + 500], now + n);
      }
      return (sql.databaseSize - empty) / ROWS;
    });
    console.log(`bytes per replay: ${perReplay.toFixed(1)}`);
    expect(perReplay).toBeLessThanOrEqual(REPLAY_ROW_BYTES);
    expect(perReplay).toBeGreaterThan(REPLAY_ROW_BYTES * 0.75);
  });
});
