import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  EVENT_RETENTION_MS,
  EVENT_ROW_BYTES,
  PRUNE_BATCH,
  PRUNE_BATCHES_PER_RUN,
  pruneOrderEvents,
} from "../../../src/events/prune-order-events";
import { CATCH_UP_LANES, dispatchEvents } from "../../../src/webhook-delivery/dispatch-pass";
import { cappedD1 } from "../../support/faults";
import { api } from "../../support/request";
import { feedHead } from "../../support/webhook-fixtures";

/**
 * The order events kept within their age and their storage budget
 * (docs/design/order-events.md#retention), and the pipeline's passes within
 * the queries one invocation may make: each run here goes through a D1
 * that throws past 1,000 queries, as D1 does in production.
 */
const sql = (statement: string, ...values: unknown[]) =>
  env.DB.prepare(statement)
    .bind(...values)
    .run();

/** `count` events after the head, each created at `createdAt`. */
async function appendEvents(count: number, createdAt: string): Promise<number> {
  const head = Number(await feedHead());
  await sql(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
     INSERT INTO order_events (seq, type, created_at, order_id, order_row) SELECT ?2 + i, 'order.created',
       ?3, i, '{"id":"1","status":"pending","complete":0}' FROM n`,
    count,
    head,
    createdAt,
  );
  return head;
}

const prunedThrough = () =>
  env.DB.prepare("SELECT pruned_through FROM order_event_retention").first<number>("pruned_through");
const kept = () => env.DB.prepare("SELECT count(*) AS n FROM order_events").first<number>("n");

describe("the prune of order events", () => {
  it("takes a backlog of old events a bounded batch a run, each run within D1's queries per invocation, and goes on where it stopped", async () => {
    const now = Date.now();
    const backlog = PRUNE_BATCH * PRUNE_BATCHES_PER_RUN + 30_000;
    const first = await appendEvents(backlog, new Date(now - EVENT_RETENTION_MS - 60_000).toISOString());
    await appendEvents(10, new Date(now).toISOString());
    const d1 = cappedD1();
    expect(await pruneOrderEvents(d1.db, now, 5 * 2 ** 30)).toBe(PRUNE_BATCH * PRUNE_BATCHES_PER_RUN);
    expect(d1.queries()).toBeLessThanOrEqual(1 + 3 * PRUNE_BATCHES_PER_RUN);
    d1.reset();
    expect(await pruneOrderEvents(d1.db, now, 5 * 2 ** 30)).toBe(30_000 + first);
    expect(await prunedThrough()).toBe(first + backlog);
    d1.reset();
    // Caught up: a run reads, finds nothing to do, and stops.
    expect(await pruneOrderEvents(d1.db, now, 5 * 2 ** 30)).toBe(0);
    expect(d1.queries()).toBeLessThanOrEqual(2);
    expect(await kept()).toBe(10);
    // A quarter of a million rows written and deleted: seconds on an idle machine, many more beside a busy one.
  }, 120_000);

  it("keeps the events under their storage budget at any rate, oldest first, the feed answering 410 below what went", async () => {
    const now = Date.now();
    // A budget of 2,000 events, and 5,000 written in the last minute: younger than any age limit.
    const budget = 2_000 * EVENT_ROW_BYTES;
    const first = await appendEvents(5_000, new Date(now).toISOString());
    const d1 = cappedD1();
    expect(await pruneOrderEvents(d1.db, now, budget)).toBeGreaterThanOrEqual(3_000);
    expect(await kept()).toBeLessThanOrEqual(2_000);
    expect(await prunedThrough()).toBe(first + 3_000);
    const { results } = await env.DB.prepare("SELECT min(seq) AS oldest, max(seq) AS newest FROM order_events").all<{
      oldest: number;
      newest: number;
    }>();
    expect(results[0]).toEqual({ oldest: first + 3_001, newest: first + 5_000 });
    const answer = await api("/admin/pipeline", {
      key: null,
      headers: { Authorization: "Bearer operator-token-for-tests" },
    });
    const health = await answer.json<{ orderEvents: { rows: number } }>();
    expect(answer.status, JSON.stringify(health)).toBe(200);
    expect(health.orderEvents.rows).toBe(2_000);
  });
});

describe("a dispatch pass over a thousand endpoints", () => {
  it("stays within D1's queries per invocation, and hands each lane its events in one call", async () => {
    await sql("DELETE FROM webhook_endpoints");
    await sql("UPDATE webhook_dispatch SET mark = (SELECT coalesce(max(seq), 0) FROM order_events)");
    const head = Number(await feedHead());
    await sql(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
       INSERT INTO webhook_endpoints (id, budget, url, types, status, created_at, from_seq, secret_sealed)
       SELECT printf('we_%020d', i), printf('key_%d', i % 100), 'https://receiver.example/' || i,
         'order.created', 'enabled', '2026-11-26T00:00:00.000Z', ?1, 'x' FROM n`,
      head,
    );
    await appendEvents(100, new Date().toISOString());
    const d1 = cappedD1();
    const calls: number[] = [];
    const pass = await dispatchEvents(d1.db, async (_, seqs) => {
      calls.push(seqs.length);
      return seqs.length;
    });
    expect(pass).toMatchObject({ endpoints: 1_000, enqueued: 100_000, failedLanes: 0, more: true });
    expect(calls).toHaveLength(1_000);
    expect(d1.queries()).toBeLessThanOrEqual(6);

    // Every lane fails: all fall behind, recorded in one statement.
    await appendEvents(100, new Date().toISOString());
    d1.reset();
    const now = Date.now();
    const failed = await dispatchEvents(d1.db, async () => Promise.reject(new Error("lanes unreachable")), { now });
    expect(failed).toMatchObject({ failedLanes: 1_000, behind: 1_000 });
    expect(d1.queries()).toBeLessThanOrEqual(6);
    // Their retries due: CATCH_UP_LANES a pass, one read each.
    d1.reset();
    calls.length = 0;
    const catching = await dispatchEvents(d1.db, async (_, seqs) => (calls.push(seqs.length), seqs.length), {
      now: now + 1_000,
    });
    // A full page each (the 100 they missed): another pass at once finds nothing more, and those 20 are at the mark.
    expect(catching).toMatchObject({ failedLanes: 0, behind: 1_000, more: true });
    expect(calls).toEqual(Array(CATCH_UP_LANES).fill(100));
    expect(d1.queries()).toBeLessThanOrEqual(6 + CATCH_UP_LANES);
    d1.reset();
    expect(await dispatchEvents(d1.db, async (_, seqs) => seqs.length, { now: now + 1_000 })).toMatchObject({
      behind: 1_000 - CATCH_UP_LANES,
      more: false,
    });
    expect(d1.queries()).toBeLessThanOrEqual(6 + CATCH_UP_LANES);
    await sql("DELETE FROM webhook_endpoints");
  });
});
