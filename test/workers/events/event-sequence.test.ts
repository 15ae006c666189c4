import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { apiWith } from "../../support/request";
import { seedOrders } from "../../support/seed";
import type { TestKey } from "../../support/test-keys";
import { dispatchQuietly, freshWebhookOwner, laneDeliveries, makeEndpoint } from "../../support/webhook-fixtures";

/**
 * Event ids across a D1 Time Travel restore (docs/operations.md#restoring-d1):
 * the restore is simulated as what it does to the events' tables (the rows
 * after the restore point gone, the AUTOINCREMENT counter rewound); the
 * operator API's sequence, noted before and raised after, keeps every new id
 * above every id handed out, for the feed's cursors and for the webhooks.
 */
const operator = (path: string, init: RequestInit = {}) =>
  apiWith(env, `/admin${path}`, { ...init, key: null, headers: { Authorization: "Bearer operator-token-for-tests", "Content-Type": "application/json" } });
const sql = (statement: string, ...values: unknown[]) => env.DB.prepare(statement).bind(...values).run();

let owner: TestKey;
beforeEach(async () => {
  owner = await freshWebhookOwner();
});

async function feedToHead(after = ""): Promise<{ ids: string[]; cursor: string }> {
  const ids: string[] = [];
  for (let cursor = after; ; ) {
    const page = await (await apiWith(env, `/v2/store/order-events?limit=1000${cursor && `&after=${encodeURIComponent(cursor)}`}`, { key: owner.key })).json<{ data: { id: string }[]; nextCursor: string }>();
    ids.push(...page.data.map((event) => event.id));
    cursor = page.nextCursor;
    if (page.data.length === 0) return { ids, cursor };
  }
}

describe("the order event sequence across a restore", () => {
  it("is noted before and raised after, so new events take ids above every one handed out: cursors and webhooks go on", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    await seedOrders([{ id: 1 }, { id: 2 }]);
    const restorePoint = (await env.DB.prepare("SELECT max(seq) AS seq FROM order_events").first<number>("seq"))!;
    await seedOrders([{ id: 3 }, { id: 4 }, { id: 5 }]);
    // A client that followed the feed to its head, and a dispatcher that sent it all.
    const { cursor } = await feedToHead();
    const pass = await dispatchQuietly();
    expect(pass.enqueued).toBeGreaterThan(0);

    const noted = await (await operator("/order-events/sequence")).json<{ sequence: string }>();
    expect(noted.sequence).toBe(pass.mark);

    // The restore: the events after the restore point gone, the counter rewound with them.
    await sql("DELETE FROM order_events WHERE seq > ?1", restorePoint);
    await sql("UPDATE sqlite_sequence SET seq = ?1 WHERE name = 'order_events'", restorePoint);

    const raised = await operator("/order-events/sequence", { method: "POST", body: JSON.stringify({ atLeast: noted.sequence }) });
    expect(raised.status).toBe(200);
    expect(await raised.json()).toEqual({ sequence: noted.sequence });
    // No placeholder is left for a reader to see.
    expect(await env.DB.prepare("SELECT count(*) AS n FROM order_events WHERE seq > ?1").bind(restorePoint).first("n")).toBe(0);

    await sql("UPDATE orders SET status = 'cancelled' WHERE id = 1");
    const next = await feedToHead(cursor);
    expect(next.ids).toEqual([`evt_${BigInt(noted.sequence) + 1n}`]);
    expect(await dispatchQuietly()).toMatchObject({ enqueued: 1, mark: String(BigInt(noted.sequence) + 1n) });
    expect((await laneDeliveries(made.id)).at(-1)?.seq).toBe(Number(noted.sequence) + 1);

    // Never lowered; a body that is not a sequence is refused.
    expect(await (await operator("/order-events/sequence", { method: "POST", body: JSON.stringify({ atLeast: "1" }) })).json()).toEqual({ sequence: String(BigInt(noted.sequence) + 1n) });
    expect((await operator("/order-events/sequence", { method: "POST", body: JSON.stringify({ atLeast: "-5" }) })).status).toBe(400);
    // A digit too many would spend the int64 sequence: refused.
    const typo = await operator("/order-events/sequence", { method: "POST", body: JSON.stringify({ atLeast: "9223372036854775800" }) });
    expect(typo.status).toBe(400);
    expect(((await typo.json()) as { message: string }).message).toContain("check the value noted before the restore");
  });
});
