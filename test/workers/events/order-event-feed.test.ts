import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../../src/app/worker";
import { feedCursor } from "../../../src/events/order-event-feed-query";
import { readFeedPage } from "../../../src/events/order-event-feed";
import { EVENT_RETENTION_MS } from "../../../src/events/prune-order-events";
import type { D1Queryable } from "../../../src/lib/d1-session";
import { encodeCursor } from "../../../src/orders/pages/order-cursor";
import { api, errorBodyOf } from "../../support/request";
import { seedOrders } from "../../support/seed";
import { storeTestKey } from "../../support/test-keys";
import { eventsOfEachTest, type EventPage } from "../../support/event-feed";
import { feedHead } from "../../support/webhook-fixtures";

/**
 * The order event feed, GET /v2/store/order-events (docs/api.md#events-and-webhooks):
 * every change in commit order, a page at a time, whoever wrote it; a
 * position that is never null. Its wait: order-event-feed-wait.test.ts.
 */
const sql = (statement: string, ...values: unknown[]) =>
  env.DB.prepare(statement)
    .bind(...values)
    .run();

const feed = eventsOfEachTest();

async function page(query: string): Promise<EventPage> {
  const response = await api(`/v2/store/order-events?${query}`);
  expect(response.status).toBe(200);
  expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
  return response.json<EventPage>();
}

/** Every page from `after` to the first short one; the events and the last page's cursor. */
async function walk(
  after: string,
  query = "limit=2",
): Promise<{ events: EventPage["data"]; pages: number; last: string }> {
  const events: EventPage["data"] = [];
  for (let pages = 1, cursor = after; ; pages++) {
    const next = await page(`${query}&after=${cursor}`);
    events.push(...next.data);
    expect(next.nextCursor).toEqual(expect.any(String));
    if (next.data.length < Number(new URLSearchParams(query).get("limit") ?? 100))
      return { events, pages, last: next.nextCursor };
    cursor = next.nextCursor;
  }
}

describe("the order event feed", () => {
  it("gives every change once, in commit order, across pages, whoever wrote it; the last cursor continues with what comes next", async () => {
    await seedOrders([{ id: 1, petId: 5, quantity: 2 }, { id: 2 }, { id: 9223372036854775807n, status: "shipped" }]);
    expect((await api("/v2/store/orders/1", { method: "DELETE" })).status).toBe(204);
    await sql("UPDATE orders SET status = 'delivered' WHERE id = ?1", "9223372036854775807");
    await sql("UPDATE orders SET quantity = 3 WHERE id = 2");
    await sql("DELETE FROM orders WHERE id = 2");

    const { events, pages, last } = await walk(feed.start);
    expect(pages).toBe(4);
    expect(events.map((event) => [event.type, event.order.id])).toEqual([
      ["order.created", "1"],
      ["order.created", "2"],
      ["order.created", "9223372036854775807"],
      ["order.cancelled", "1"],
      ["order.delivered", "9223372036854775807"],
      ["order.updated", "2"],
      ["order.deleted", "2"],
    ]);
    const ids = events.map((event) => Number(event.id.slice("evt_".length)));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    expect(events[3]).toMatchObject({
      order: { id: "1", petId: "5", quantity: 2, status: "cancelled", complete: false },
      previous: { status: "pending" },
    });
    expect(events[5]!.previous).toEqual({ quantity: null });

    // Exact int64 on the wire, as a string of its digits (docs/api.md#int64-ids-in-v2).
    const raw = await (await api(`/v2/store/order-events?after=${feed.start}&types=order.delivered`)).text();
    expect(raw).toContain('"id":"9223372036854775807"');

    // The empty last page says where the next event will be: nothing is seen twice, nothing missed.
    await seedOrders([{ id: 3 }]);
    const after = await page(`after=${last}`);
    expect(after.data.map((event) => [event.type, event.order.id])).toEqual([["order.created", "3"]]);
  });

  it("orders a page by the sequence's number, not its digits, where it crosses into another length (99 before 100)", async () => {
    // The next events get sequence numbers 98, 99, 100, 101: sorted as text, 100 and 101 would come first.
    await sql("UPDATE sqlite_sequence SET seq = 97 WHERE name = 'order_events'");
    await sql("DELETE FROM order_events WHERE seq > 97");
    await seedOrders([{ id: 1 }, { id: 2 }]);
    expect((await api("/v2/store/orders/1", { method: "DELETE" })).status).toBe(204);
    expect((await api("/v2/store/orders/2", { method: "DELETE" })).status).toBe(204);
    const after = await feedCursor("97");
    expect((await page(`limit=10&after=${after}`)).data.map((event) => event.id)).toEqual([
      "evt_98",
      "evt_99",
      "evt_100",
      "evt_101",
    ]);
    expect(
      (await page(`limit=10&types=order.created,order.cancelled&after=${after}`)).data.map((event) => event.id),
    ).toEqual(["evt_98", "evt_99", "evt_100", "evt_101"]);
  });

  it("starts at the oldest event kept without after", async () => {
    await seedOrders([{ id: 4 }]);
    const first = await page("limit=1");
    expect(first.data).toHaveLength(1);
    expect(Number(first.data[0]!.id.slice(4))).toBeLessThanOrEqual(Number(await feedHead()));
    expect(first.nextCursor).toBe(await feedCursor(first.data[0]!.id.slice(4)));
  });

  it("keeps only the types asked for, and a short page's cursor goes past what did not match", async () => {
    await seedOrders([{ id: 1 }, { id: 2 }, { id: 3 }]);
    await sql("UPDATE orders SET status = 'cancelled' WHERE id = 2");
    await sql("UPDATE orders SET status = 'shipped' WHERE id = 3");
    const cancelled = await page(`after=${feed.start}&types=order.shipped,order.cancelled`);
    expect(cancelled.data.map((event) => [event.type, event.order.id])).toEqual([
      ["order.cancelled", "2"],
      ["order.shipped", "3"],
    ]);
    // Nothing of these types since: the cursor is the head of the feed, so the next read skips the creations for good.
    expect(cancelled.nextCursor).toBe(await feedCursor(await feedHead()));
    const none = await page(`after=${feed.start}&types=order.deleted`);
    expect(none.data).toEqual([]);
    expect(none.nextCursor).toBe(await feedCursor(await feedHead()));
  });

  it("reads about a page's rows through the sequence and type keys, however many events there are", async () => {
    const after = await feedHead();
    // 3,000 creations and 3 cancels among them.
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)
       INSERT INTO orders (id, status, complete, created_at, updated_at) SELECT i, 'pending', 0, 'x', 'x' FROM n`,
    ).run();
    await sql("UPDATE orders SET status = 'cancelled' WHERE id IN (10, 1500, 2990)");
    let rowsRead = 0;
    const counting: D1Queryable = {
      prepare: (query) => env.DB.prepare(query),
      batch: async <T>(statements: D1PreparedStatement[]) => {
        const results = await env.DB.batch<T>(statements);
        rowsRead += results.reduce((sum, result) => sum + result.meta.rows_read, 0);
        return results;
      },
    };
    const plain = await readFeedPage(counting, { after, limit: 10, waitSeconds: 0 });
    expect(plain.events).toHaveLength(10);
    expect(rowsRead).toBeLessThanOrEqual(30);
    rowsRead = 0;
    const rare = await readFeedPage(counting, {
      after,
      types: ["order.cancelled", "order.deleted"],
      limit: 10,
      waitSeconds: 0,
    });
    expect(rare.events.map((event) => event.type)).toEqual(["order.cancelled", "order.cancelled", "order.cancelled"]);
    // Each type's arm reads its own events (D1 counts a subquery's rows twice): never the 3,000 creations.
    expect(rowsRead).toBeLessThanOrEqual(30);
  });

  it.each([
    ["an unknown parameter", "cursor=abc", "invalid_query", /Unknown query parameter "cursor"/],
    ["a repeated parameter", "limit=1&limit=2", "invalid_query", /limit is given more than once/],
    ["a limit of 0", "limit=0", "invalid_query", /limit must be a whole number from 1 to 1000/],
    ["a limit over 1000", "limit=1001", "invalid_query", /limit must be/],
    ["a wait over 20 s", "wait=21", "invalid_query", /wait must be a whole number of seconds from 0 to 20/],
    ["a negative wait", "wait=-1", "invalid_query", /wait must be/],
    ["a fractional wait", "wait=1.5", "invalid_query", /wait must be/],
    [
      "an unknown type",
      "types=order.created,order.paid",
      "invalid_query",
      /types must be one or more of order.created/,
    ],
    ["an empty type", "types=", "invalid_query", /types must be/],
    ["a made-up cursor", "after=abc", "invalid_cursor", /not a cursor this API made/],
    ["a cursor with bytes outside base64url", "after=%E2%82%AC", "invalid_cursor", /not a cursor this API made/],
  ])("answers 400 for %s", async (_, query, code, message) => {
    const response = await api(`/v2/store/order-events?${query}`);
    expect(response.status).toBe(400);
    const body = await errorBodyOf(response);
    expect(body.code).toBe(code);
    expect(body.message).toMatch(message);
  });

  it("refuses a page cursor of the order list as after: another kind of cursor", async () => {
    const response = await api(`/v2/store/order-events?after=${await encodeCursor("5", {})}`);
    expect(await errorBodyOf(response)).toMatchObject({ code: "invalid_cursor", status: 400 });
  });

  it("answers 410 cursor_expired for a cursor before what was pruned, and starts after it without after", async () => {
    // The triggers date events by the database's clock: the prune runs at the present.
    const now = Date.now();
    const old = new Date(now - EVENT_RETENTION_MS - 1_000).toISOString();
    const head = Number(await feedHead());
    // Events come in time order: those before the old ones are older still.
    await sql("UPDATE order_events SET created_at = ?1 WHERE seq <= ?2", old, head);
    for (const seq of [head + 1, head + 2])
      await sql(
        "INSERT INTO order_events (seq, type, created_at, order_id, order_row) VALUES (?1, 'order.created', ?2, 1, ?3)",
        seq,
        old,
        '{"id":"1","status":"pending","complete":0}',
      );
    await seedOrders([{ id: 7 }]);
    const ctx = createExecutionContext();
    worker.scheduled(createScheduledController({ scheduledTime: now, cron: "17 3 * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);

    const expired = await api(`/v2/store/order-events?after=${await feedCursor(String(head + 1))}`);
    expect(await errorBodyOf(expired)).toMatchObject({ code: "cursor_expired", status: 410 });
    expect((await errorBodyOf(await api(`/v2/store/order-events?after=${feed.start}`))).code).toBe("cursor_expired");
    // At the mark itself nothing was skipped: the page goes on.
    const kept = await page(`after=${await feedCursor(String(head + 2))}`);
    expect(kept.data.map((event) => event.order.id)).toEqual(["7"]);
    const oldest = await page("");
    expect(oldest.data.map((event) => event.order.id)).toEqual(["7"]);
  });

  it("needs the orders:read scope", async () => {
    const { key } = await storeTestKey({ scopes: ["orders:write"] });
    expect(await errorBodyOf(await api("/v2/store/order-events", { key }))).toMatchObject({
      code: "insufficient_scope",
      status: 403,
    });
  });
});
