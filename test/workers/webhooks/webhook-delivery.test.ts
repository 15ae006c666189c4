import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { deliverOne, recordDeadLetter, type DeliveryContext } from "../../../src/webhooks/delivery-attempt";
import { deliveryIdOf, dispatchEvents } from "../../../src/webhooks/dispatch-pass";
import { DISPATCHER_NAME } from "../../../src/webhooks/dispatcher-calls";
import { signWebhook } from "../../../src/webhooks/webhook-signature";
import { budgetLiveness } from "../../../src/keys/live-budget";
import { TtlCache } from "../../../src/lib/ttl-cache";
import { EVENT_RETENTION_MS } from "../../../src/events/prune-order-events";
import { DELIVERY_PRUNE_BATCH, pruneWebhookDeliveries } from "../../../src/webhooks/prune-webhook-deliveries";
import { apiWith } from "../../support/request";
import { feedHead, freshWebhookOwner, makeEndpoint, recordingQueue, withoutDispatcher } from "../../support/webhook-fixtures";
import { seedOrders } from "../../support/seed";
import { storeTestKey, type TestKey } from "../../support/test-keys";

/**
 * Webhook delivery (docs/design/order-events.md#delivery): the dispatcher's
 * pass, the queue consumer's attempt with a receiver of the test's making,
 * the dead letters, the signature against the Standard Webhooks vector.
 */
const sql = (statement: string, ...values: unknown[]) => env.DB.prepare(statement).bind(...values).run();

let owner: TestKey;
beforeEach(async () => {
  owner = await freshWebhookOwner();
});

const head = feedHead;
const endpoint = (body: { url: string; types?: string[] }, key = owner.key) => makeEndpoint(key, body);

describe("the dispatcher's pass", () => {
  it("enqueues one message per event and endpoint that wants it, for events after the endpoint was made", async () => {
    await seedOrders([{ id: 1 }]);
    const cancelled = await endpoint({ url: "https://a.example/", types: ["order.cancelled"] });
    const every = await endpoint({ url: "https://b.example/" }, (await storeTestKey({ scopes: ["webhooks:manage"] })).key);
    const mark = await head();
    await seedOrders([{ id: 2 }]);
    await sql("UPDATE orders SET status = 'cancelled' WHERE id = 1");
    const { queue, sent } = recordingQueue();
    const pass = await dispatchEvents(env.DB, queue, "0", new Date().toISOString());

    const created = String(Number(mark) + 1);
    const cancel = String(Number(mark) + 2);
    expect(sent).toEqual([{ deliveryId: deliveryIdOf(every.id, created) }, { deliveryId: deliveryIdOf(cancelled.id, cancel) }, { deliveryId: deliveryIdOf(every.id, cancel) }]);
    expect(pass).toMatchObject({ mark: cancel, more: false, endpoints: 2, enqueued: 3 });
    const rows = await env.DB.prepare("SELECT id, outcome, attempts FROM webhook_deliveries ORDER BY id").all();
    expect(rows.results).toHaveLength(3);

    // Run again from the old mark (a crash before the mark was stored): the same messages again, no new rows.
    const again = recordingQueue();
    await dispatchEvents(env.DB, again.queue, "0", new Date().toISOString());
    expect(again.sent).toEqual(sent);
    expect((await env.DB.prepare("SELECT count(*) AS n FROM webhook_deliveries").first("n"))).toBe(3);
    // From the stored mark: nothing.
    const next = recordingQueue();
    expect(await dispatchEvents(env.DB, next.queue, pass.mark, new Date().toISOString())).toMatchObject({ mark: cancel, enqueued: 0 });
  });

  it("reads events by the sequence's number, not its digits, where it crosses into another length: none skipped, none out of order", async () => {
    const made = await endpoint({ url: "https://a.example/", types: ["order.created"] });
    // The next 151 events get 950..1100: sorted as text, "1000".."1099" would fill the first pass and 950..999 be passed over.
    await sql("UPDATE sqlite_sequence SET seq = 949 WHERE name = 'order_events'");
    await sql(
      `INSERT INTO orders (id, pet_id, quantity, status, complete, created_at, updated_at)
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 151) SELECT i, 1, 1, 'pending', 0, '2026-11-01T00:00:00Z', '2026-11-01T00:00:00Z' FROM n`,
    );
    const { queue, sent } = recordingQueue();
    const first = await dispatchEvents(env.DB, queue, "949", new Date().toISOString());
    expect(first).toMatchObject({ mark: "1049", more: true, enqueued: 100 });
    expect(await dispatchEvents(env.DB, queue, first.mark, new Date().toISOString())).toMatchObject({ mark: "1100", more: false, enqueued: 51 });
    const seqs = Array.from({ length: 151 }, (_, index) => String(950 + index));
    expect(sent).toEqual(seqs.map((seq) => ({ deliveryId: deliveryIdOf(made.id, seq) })));

    // The deliveries list, newest first by number too.
    const listed = await (await apiWith(env, `/v2/webhook-endpoints/${made.id}/deliveries`, { key: owner.key })).json<{ data: { eventId: string }[] }>();
    expect(listed.data.slice(0, 2).map((delivery) => delivery.eventId)).toEqual(["evt_1100", "evt_1099"]);
    expect(listed.data.map((delivery) => Number(delivery.eventId.slice(4)))).toEqual([...listed.data.map((delivery) => Number(delivery.eventId.slice(4)))].sort((a, b) => b - a));
  });

  it("delivers nothing to a disabled endpoint, and with no endpoint moves its mark to the head", async () => {
    const made = await endpoint({ url: "https://a.example/" });
    await sql("UPDATE webhook_endpoints SET status = 'disabled' WHERE id = ?1", made.id);
    await seedOrders([{ id: 3 }]);
    const { queue, sent } = recordingQueue();
    expect(await dispatchEvents(env.DB, queue, "0", new Date().toISOString())).toEqual({ mark: await head(), more: false, endpoints: 0, enqueued: 0 });
    expect(sent).toEqual([]);
  });

  it("keeps its mark in its object's storage across a restart", async () => {
    await endpoint({ url: "https://a.example/", types: ["order.deleted"] });
    await seedOrders([{ id: 4 }]);
    const stub = env.WEBHOOK_DISPATCHER.getByName(DISPATCHER_NAME);
    await runInDurableObject(stub, async (instance) => instance.alarm());
    const reached = await stub.mark();
    expect(reached).toBe(await head());
    // The object's memory is gone (a new instance reads storage): the mark is not.
    expect(await runInDurableObject(stub, (_, state) => state.storage.kv.get("mark"))).toBe(reached);
    // A wake runs a pass at once: nothing new, so the mark stays.
    await stub.wake();
    await runDurableObjectAlarm(stub);
    expect(await stub.mark()).toBe(reached);
  });

  it("is brought forward by a cancel's nudge while it watches, and never woken by one while it sleeps", async () => {
    const stub = env.WEBHOOK_DISPATCHER.getByName("nudge-test");
    await runInDurableObject(stub, (_, state) => state.storage.deleteAlarm());
    const passes = () => runInDurableObject(stub, (_, state) => state.storage.kv.get("mark"));
    await stub.nudge();
    expect(await runInDurableObject(stub, (_, state) => state.storage.getAlarm())).toBeNull();
    expect(await passes()).toBeUndefined();
    // Watching: its next pass is due in a while; the nudge makes it now, and the pass runs (and stores its mark).
    const later = Date.now() + 60_000;
    await runInDurableObject(stub, (_, state) => state.storage.setAlarm(later));
    await stub.nudge();
    await vi.waitFor(async () => expect(await passes()).toEqual(expect.any(String)), { timeout: 10_000 });
    expect((await runInDurableObject(stub, (_, state) => state.storage.getAlarm())) ?? 0).toBeLessThan(later);
  });
});

describe("a delivery attempt", () => {
  /** A receiver that answers the statuses given, in turn, and records what it got. */
  function receiver(...statuses: number[]) {
    const got: { url: string; headers: Headers; body: string }[] = [];
    const fetch = (async (url: string, init: RequestInit) => {
      got.push({ url, headers: new Headers(init.headers), body: String(init.body) });
      const status = statuses.shift() ?? 200;
      if (status === 0) throw new TypeError("connection refused");
      return new Response(status === 204 ? null : "ok", { status });
    }) as unknown as typeof globalThis.fetch;
    return { got, fetch };
  }

  const context = (fetch: typeof globalThis.fetch, now = Date.now()): DeliveryContext => ({
    db: env.DB,
    fetch,
    sealingKey: env.WEBHOOK_SECRETS_KEY!,
    retrySeconds: [1, 2, 3],
    now: () => now,
    budgetLiveness: (budget) => budgetLiveness(env.API_KEYS, budget, new TtlCache(10), now),
  });

  async function pendingDelivery(types?: string[]) {
    const made = await endpoint({ url: "https://receiver.example/hooks", ...(types && { types }) });
    await seedOrders([{ id: 9223372036854775807n, petId: 5 }]);
    const { queue, sent } = recordingQueue();
    await dispatchEvents(env.DB, queue, "0", new Date().toISOString());
    expect(sent).toHaveLength(1);
    return { made, deliveryId: sent[0]!.deliveryId };
  }

  const deliveryRow = (id: string) => env.DB.prepare("SELECT outcome, attempts, last_status, last_error, next_attempt_at FROM webhook_deliveries WHERE id = ?1").bind(id).first();

  it("posts the event signed as Standard Webhooks specifies, exact ids, and records it delivered", async () => {
    const { made, deliveryId } = await pendingDelivery();
    const { got, fetch } = receiver(204);
    expect(await deliverOne({ body: { deliveryId }, attempts: 1 }, context(fetch, 1_790_000_000_000))).toBe("ack");
    const [post] = got;
    expect(post!.url).toBe("https://receiver.example/hooks");
    const id = post!.headers.get("webhook-id")!;
    expect(id).toMatch(/^evt_[0-9]+$/);
    expect(post!.headers.get("webhook-timestamp")).toBe("1790000000");
    expect(post!.headers.get("content-type")).toBe("application/json");
    expect(post!.headers.get("webhook-signature")).toBe(await signWebhook(made.secret, id, 1_790_000_000, post!.body));
    expect(post!.body).toContain('"order":{"id":"9223372036854775807","petId":"5",');
    expect(JSON.parse(post!.body)).toMatchObject({ id, type: "order.created" });
    expect(await deliveryRow(deliveryId)).toMatchObject({ outcome: "delivered", attempts: 1, last_status: 204 });
    // A message delivered twice (at least once) is acked without a second POST.
    expect(await deliverOne({ body: { deliveryId }, attempts: 1 }, context(fetch))).toBe("ack");
    expect(got).toHaveLength(1);
  });

  it("posts ids that Standard Webhooks' own verifier hands back exact, as strings, in order and previous alike", async () => {
    const made = await endpoint({ url: "https://receiver.example/hooks", types: ["order.created", "order.updated"] });
    // Above 2^53 a double cannot tell an id from its neighbours: 9007199254740993 would come back as 9007199254740992.
    await seedOrders([{ id: 9007199254740993n, petId: 9007199254740995n }]);
    await sql("UPDATE orders SET pet_id = '9007199254740997' WHERE id = '9007199254740993'");
    const { queue, sent } = recordingQueue();
    await dispatchEvents(env.DB, queue, "0", new Date().toISOString());
    const { got, fetch } = receiver();
    for (const { deliveryId } of sent) expect(await deliverOne({ body: { deliveryId }, attempts: 1 }, context(fetch))).toBe("ack");
    const verified = got.map((post) => new Webhook(made.secret).verify(post.body, Object.fromEntries(post.headers)));
    expect(verified).toEqual([
      expect.objectContaining({ type: "order.created", order: expect.objectContaining({ id: "9007199254740993", petId: "9007199254740995" }) }),
      expect.objectContaining({ type: "order.updated", order: expect.objectContaining({ id: "9007199254740993", petId: "9007199254740997" }), previous: { petId: "9007199254740995" } }),
    ]);
  });

  it("is retried on the schedule while the receiver fails, with the same webhook-id, until it answers 2xx", async () => {
    const { deliveryId } = await pendingDelivery();
    const { got, fetch } = receiver(500, 0, 200);
    expect(await deliverOne({ body: { deliveryId }, attempts: 1 }, context(fetch, 1_790_000_000_000))).toEqual({ retryAfterSeconds: 1 });
    expect(await deliveryRow(deliveryId)).toMatchObject({ outcome: "pending", attempts: 1, last_status: 500, next_attempt_at: new Date(1_790_000_001_000).toISOString() });
    expect(await deliverOne({ body: { deliveryId }, attempts: 2 }, context(fetch))).toEqual({ retryAfterSeconds: 2 });
    expect(await deliveryRow(deliveryId)).toMatchObject({ attempts: 2, last_status: null, last_error: "could not connect" });
    expect(await deliverOne({ body: { deliveryId }, attempts: 3 }, context(fetch))).toBe("ack");
    expect(new Set(got.map((post) => post.headers.get("webhook-id"))).size).toBe(1);
    expect(await deliveryRow(deliveryId)).toMatchObject({ outcome: "delivered", attempts: 3, last_status: 200 });
  });

  it("ends in the dead letters when the receiver is down for the whole schedule, and its endpoint is disabled", async () => {
    const { made, deliveryId } = await pendingDelivery();
    const { fetch } = receiver(503, 503, 503, 503);
    for (const attempts of [1, 2, 3, 4]) expect(await deliverOne({ body: { deliveryId }, attempts }, context(fetch))).not.toBe("ack");
    await recordDeadLetter({ body: { deliveryId } }, context(fetch));
    expect(await deliveryRow(deliveryId)).toMatchObject({ outcome: "failed", attempts: 4, last_status: 503, next_attempt_at: null });
    const disabled = await env.DB.prepare("SELECT status, disabled_reason FROM webhook_endpoints WHERE id = ?1").bind(made.id).first();
    expect(disabled).toEqual({ status: "disabled", disabled_reason: "every delivery failed for 6 s" });
    // Nothing more goes to it.
    const next = recordingQueue();
    await seedOrders([{ id: 77 }]);
    await dispatchEvents(env.DB, next.queue, "0", new Date().toISOString());
    expect(next.sent).toEqual([]);
  });

  it("keeps an endpoint that had a delivery through while one failed", async () => {
    const { made, deliveryId } = await pendingDelivery();
    await seedOrders([{ id: 78 }]);
    const { queue, sent } = recordingQueue();
    await dispatchEvents(env.DB, queue, "0", new Date().toISOString());
    const other = sent.find((message) => message.deliveryId !== deliveryId)!;
    expect(await deliverOne({ body: other, attempts: 1 }, context(receiver(200).fetch))).toBe("ack");
    await recordDeadLetter({ body: { deliveryId } }, context(receiver().fetch));
    expect(await env.DB.prepare("SELECT status FROM webhook_endpoints WHERE id = ?1").bind(made.id).first("status")).toBe("enabled");
  });

  it("is dropped when its endpoint was deleted, and never reaches another budget's endpoint", async () => {
    const { made, deliveryId } = await pendingDelivery();
    const response = await apiWith(env, `/v2/webhook-endpoints/${made.id}`, { method: "DELETE", key: owner.key });
    expect(response.status).toBe(204);
    const { got, fetch } = receiver();
    expect(await deliverOne({ body: { deliveryId }, attempts: 1 }, context(fetch))).toBe("ack");
    expect(got).toEqual([]);
  });
});

describe("an endpoint's deliveries", () => {
  it("are listed newest first for the endpoint's budget, and one is sent again on request with the same event", async () => {
    const made = await endpoint({ url: "https://receiver.example/" });
    await seedOrders([{ id: 11 }, { id: 12 }]);
    const { queue, sent } = recordingQueue();
    await dispatchEvents(env.DB, queue, "0", new Date().toISOString());
    await recordDeadLetter({ body: sent[0]! }, { db: env.DB, now: Date.now, retrySeconds: [1] });
    const listed = await (await apiWith(env, `/v2/webhook-endpoints/${made.id}/deliveries`, { key: owner.key })).json<{ data: Record<string, unknown>[] }>();
    expect(listed.data.map((delivery) => [delivery.id, delivery.outcome])).toEqual([
      [sent[1]!.deliveryId, "pending"],
      [sent[0]!.deliveryId, "failed"],
    ]);
    expect(listed.data[1]).toEqual({ id: sent[0]!.deliveryId, eventId: expect.stringMatching(/^evt_/), attempts: 0, lastStatus: null, lastError: null, nextAttemptAt: null, outcome: "failed", createdAt: expect.any(String), attemptLog: [] });

    // The dead letter disabled the endpoint (it failed the whole schedule): a retry says so until it is enabled again.
    const path = `/v2/webhook-endpoints/${made.id}/deliveries/${sent[0]!.deliveryId}/retry`;
    expect(((await (await apiWith(env, path, { method: "POST", key: owner.key })).json()) as { code: string }).code).toBe("webhook_endpoint_disabled");
    const enable = { method: "PATCH", key: owner.key, headers: { "Content-Type": "application/json" }, body: JSON.stringify({ status: "enabled" }) };
    expect((await apiWith(withoutDispatcher(), `/v2/webhook-endpoints/${made.id}`, enable)).status).toBe(200);
    const requeued = recordingQueue();
    const retry = await apiWith({ ...env, WEBHOOK_DELIVERIES: requeued.queue as unknown as Env["WEBHOOK_DELIVERIES"] }, `/v2/webhook-endpoints/${made.id}/deliveries/${sent[0]!.deliveryId}/retry`, { method: "POST", key: owner.key });
    expect(retry.status).toBe(202);
    expect(await retry.json()).toMatchObject({ id: sent[0]!.deliveryId, outcome: "pending", nextAttemptAt: expect.any(String) });
    expect(requeued.sent).toEqual([sent[0]]);

    const stranger = (await storeTestKey({ scopes: ["webhooks:manage"] })).key;
    expect((await apiWith(env, `/v2/webhook-endpoints/${made.id}/deliveries`, { key: stranger })).status).toBe(404);
    const unknown = await apiWith(env, `/v2/webhook-endpoints/${made.id}/deliveries/wd_00000000000000000000_1/retry`, { method: "POST", key: owner.key });
    expect(((await unknown.json()) as { code: string }).code).toBe("webhook_delivery_not_found");
  });
});

describe("keeping deliveries", () => {
  it("prunes settled deliveries past the events' retention and a deleted endpoint's, in batches, and keeps the rest", async () => {
    const kept = await endpoint({ url: "https://kept.example/" });
    const deleted = await endpoint({ url: "https://deleted.example/" });
    // 2,500 deliveries to the endpoint that goes, 3 to the one that stays.
    await sql(
      `INSERT INTO webhook_deliveries (id, endpoint_id, event_seq, outcome, created_at, updated_at)
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2500) SELECT 'wd_deleted_' || i, ?1, i, 'delivered', '2026-11-01T00:00:00Z', '2026-11-01T00:00:00Z' FROM n`,
      deleted.id,
    );
    const old = new Date(Date.now() - EVENT_RETENTION_MS - 86_400_000).toISOString();
    const rows = [["wd_old_delivered", "delivered", old], ["wd_old_pending", "pending", old], ["wd_recent_failed", "failed", new Date().toISOString()]];
    for (const [seq, [id, outcome, at]] of rows.entries()) {
      await sql("INSERT INTO webhook_deliveries (id, endpoint_id, event_seq, outcome, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5)", id, kept.id, seq + 1, outcome, at);
    }
    expect((await apiWith(env, `/v2/webhook-endpoints/${deleted.id}`, { method: "DELETE", key: owner.key })).status).toBe(204);
    const count = (endpointId: string) => env.DB.prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE endpoint_id = ?1").bind(endpointId).first<number>("n");
    // The delete took one batch with it; the rest are the prune's.
    expect(await count(deleted.id)).toBe(2500 - DELIVERY_PRUNE_BATCH);

    expect(await pruneWebhookDeliveries(env.DB, Date.now())).toBe(2500 - DELIVERY_PRUNE_BATCH + 1);
    expect(await count(deleted.id)).toBe(0);
    const left = await env.DB.prepare("SELECT id FROM webhook_deliveries ORDER BY id").all<{ id: string }>();
    expect(left.results.map((row) => row.id)).toEqual(["wd_old_pending", "wd_recent_failed"]);
  });
});

describe("Standard Webhooks signatures", () => {
  it("reproduce the specification's test vector", async () => {
    expect(await signWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, '{"test": 2432232314}')).toBe(
      "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    );
  });
});
