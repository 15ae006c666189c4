import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { beforeEach, describe, expect, it, vi } from "vitest";
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
  apiWith(env, `/admin${path}`, {
    ...init,
    key: null,
    headers: { Authorization: "Bearer operator-token-for-tests", "Content-Type": "application/json" },
  });
const sql = (statement: string, ...values: unknown[]) =>
  env.DB.prepare(statement)
    .bind(...values)
    .run();

let owner: TestKey;
beforeEach(async () => {
  owner = await freshWebhookOwner();
});

async function feedToHead(after = ""): Promise<{ ids: string[]; cursor: string }> {
  const ids: string[] = [];
  for (let cursor = after; ; ) {
    const page = await (
      await apiWith(env, `/v2/store/order-events?limit=1000${cursor && `&after=${encodeURIComponent(cursor)}`}`, {
        key: owner.key,
      })
    ).json<{ data: { id: string }[]; nextCursor: string }>();
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

    const warned = vi.spyOn(console, "warn").mockImplementation(() => {});
    const raised = await operator("/order-events/sequence", {
      method: "POST",
      body: JSON.stringify({ atLeast: noted.sequence }),
    });
    expect(raised.status).toBe(200);
    expect(await raised.json()).toEqual({ sequence: noted.sequence });
    // Its record is the log's: who raised it, to what (docs/operations.md#operator-api).
    expect(warned.mock.calls.map(([line]) => JSON.parse(String(line)))).toContainEqual(
      expect.objectContaining({ atLeast: noted.sequence, sequence: noted.sequence, operator: "tests" }),
    );
    warned.mockRestore();
    // No placeholder is left for a reader to see.
    expect(
      await env.DB.prepare("SELECT count(*) AS n FROM order_events WHERE seq > ?1").bind(restorePoint).first("n"),
    ).toBe(0);

    await sql("UPDATE orders SET status = 'cancelled' WHERE id = 1");
    const next = await feedToHead(cursor);
    expect(next.ids).toEqual([`evt_${BigInt(noted.sequence) + 1n}`]);
    expect(await dispatchQuietly()).toMatchObject({ enqueued: 1, mark: String(BigInt(noted.sequence) + 1n) });
    expect((await laneDeliveries(made.id)).at(-1)?.seq).toBe(Number(noted.sequence) + 1);

    // Never lowered; a body that is not a sequence is refused.
    expect(
      await (
        await operator("/order-events/sequence", { method: "POST", body: JSON.stringify({ atLeast: "1" }) })
      ).json(),
    ).toEqual({ sequence: String(BigInt(noted.sequence) + 1n) });
    expect(
      (await operator("/order-events/sequence", { method: "POST", body: JSON.stringify({ atLeast: "-5" }) })).status,
    ).toBe(400);
    // A digit too many would spend the int64 sequence: refused.
    const typo = await operator("/order-events/sequence", {
      method: "POST",
      body: JSON.stringify({ atLeast: "9223372036854775800" }),
    });
    expect(typo.status).toBe(400);
    expect(((await typo.json()) as { message: string }).message).toContain("check the value noted before the restore");
  });
});

describe("the webhook dispatcher across a restore", () => {
  it("refuses every order write and hands out nothing while the sequence is below what it handed out, says so, and goes on once the sequence is raised", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    await seedOrders([{ id: 11 }, { id: 12 }]);
    const restorePoint = (await env.DB.prepare("SELECT max(seq) AS seq FROM order_events").first<number>("seq"))! - 1;
    const stub = env.WEBHOOK_DISPATCHER.getByName("restore-test");
    vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("ok"));
    await runInDurableObject(stub, (instance) => instance.alarm());
    const handedOut = (await env.DB.prepare("SELECT mark FROM webhook_dispatch").first<number>("mark"))!;
    const noted = await (await operator("/order-events/sequence")).json<{ sequence: string }>();

    // The restore rewinds the events, their counter and the dispatcher's mark in D1 alike.
    await sql("DELETE FROM order_events WHERE seq > ?1", restorePoint);
    await sql("UPDATE sqlite_sequence SET seq = ?1 WHERE name = 'order_events'", restorePoint);
    await sql("UPDATE webhook_dispatch SET mark = ?1", restorePoint);
    const errors = vi.spyOn(console, "error");
    await runInDurableObject(stub, (instance) => instance.alarm());
    expect(
      errors.mock.calls.some(([line]) =>
        String(line).includes("order writes are refused and nothing is dispatched until it is raised"),
      ),
    ).toBe(true);
    // A write before the raise would make an event with an id a lane holds already: every writer is refused, this API's
    // cancels with 503 and Retry-After, and nothing changes.
    await expect(sql("UPDATE orders SET status = 'cancelled' WHERE id = 11")).rejects.toThrow(/order writes are held/);
    const refused = await apiWith(env, "/v1/store/orders/11", { method: "DELETE", key: owner.key });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("Retry-After")).toBe("60");
    expect(await refused.json()).toMatchObject({
      code: "service_unavailable",
      message: expect.stringContaining("restored"),
    });
    expect(await env.DB.prepare("SELECT status FROM orders WHERE id = 11").first("status")).toBe("pending");
    const pipeline = await (await operator("/pipeline")).json<{
      orderWrites: { heldSince: string | null };
      warnings: string[];
    }>();
    expect(pipeline.orderWrites.heldSince).not.toBeNull();
    expect(pipeline.warnings.join(" ")).toContain("order writes are refused");
    await runInDurableObject(stub, (instance) => instance.alarm());
    expect((await laneDeliveries(made.id)).map((row) => row.seq)).toEqual([handedOut - 1, handedOut]);

    // A raise short of what was handed out is refused, naming what it needs: a write in the gap would take an id a lane
    // holds already, and its webhooks would be lost. Nothing is raised, and writes stay held.
    const short = await operator("/order-events/sequence", {
      method: "POST",
      body: JSON.stringify({ atLeast: String(handedOut - 1) }),
    });
    expect(short.status).toBe(409);
    expect(await short.json()).toMatchObject({
      code: "event_sequence_too_low",
      status: 409,
      message: expect.stringContaining(`"atLeast": "${handedOut}"`),
    });
    expect((await (await operator("/order-events/sequence")).json<{ sequence: string }>()).sequence).toBe(
      String(restorePoint),
    );
    await expect(sql("UPDATE orders SET status = 'cancelled' WHERE id = 11")).rejects.toThrow(/order writes are held/);

    expect(
      (await operator("/order-events/sequence", { method: "POST", body: JSON.stringify({ atLeast: noted.sequence }) }))
        .status,
    ).toBe(200);
    expect((await apiWith(env, "/v1/store/orders/11", { method: "DELETE", key: owner.key })).status).toBe(204);
    await sql("UPDATE orders SET status = 'cancelled' WHERE id = 12");
    await runInDurableObject(stub, (instance) => instance.alarm());
    expect(
      (await (await operator("/pipeline")).json<{ orderWrites: { heldSince: string | null } }>()).orderWrites.heldSince,
    ).toBeNull();
    const seqs = (await laneDeliveries(made.id)).map((row) => row.seq);
    expect(seqs.slice(0, 2)).toEqual([handedOut - 1, handedOut]);
    expect(seqs.slice(2).every((seq) => seq > handedOut)).toBe(true);
    expect(seqs).toHaveLength(4);
    // Stopped: a dispatcher left watching would hand the next tests' lanes their events behind their backs.
    await runInDurableObject(stub, (_, state) => state.storage.deleteAlarm());
  });
});
