import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { budgetLiveness } from "../../../src/keys/live-budget";
import { TtlCache } from "../../../src/lib/ttl-cache";
import { deliverOne, nextDelaySeconds, retryAfterSeconds } from "../../../src/webhooks/delivery-attempt";
import { consumeDeliveries } from "../../../src/webhooks/queue-consumer";
import { dispatchEvents } from "../../../src/webhooks/dispatch-pass";
import { putApiKey, newApiKey } from "../../../src/keys/issue-key";
import { seedOrders } from "../../support/seed";
import { storeTestKey } from "../../support/test-keys";
import { webhookOwnerOfEachTest, consumerContext, deliveryRow, pendingDeliveries, queuedBatch, queuedMessage, receivers, recordingQueue } from "../../support/webhook-fixtures";

/**
 * Webhook delivery against what receivers and budgets do (docs/design/order-events.md#faults):
 * two copies of one delivery, what cannot be delivered, a receiver that hangs
 * beside a healthy one, a receiver that says 410 or asks for time, a budget
 * whose keys are revoked or expired.
 */
const sql = (statement: string, ...values: unknown[]) => env.DB.prepare(statement).bind(...values).run();

const owner = webhookOwnerOfEachTest();

describe("two messages of one delivery (at least once)", () => {
  it("count one step of the schedule between them, and a copy that comes before the next attempt is due is dropped unsent", async () => {
    const { deliveryIds } = await pendingDeliveries(owner.key, [19]);
    const id = deliveryIds[0]!;
    // Two copies read the row together (a live message and the sweeper's): the receiver fails both POSTs.
    let arrived = 0;
    let bothIn!: () => void;
    const together = new Promise<void>((resolve) => (bothIn = resolve));
    const { posts, fetch } = receivers(async () => {
      if (++arrived === 2) bothIn();
      await together;
      return new Response("down", { status: 500 });
    });
    const context = consumerContext({ fetch });
    const [first, second] = await Promise.all([deliverOne({ body: { deliveryId: id }, attempts: 1 }, context), deliverOne({ body: { deliveryId: id }, attempts: 1 }, context)]);
    expect(posts).toHaveLength(2);
    expect([first, second].filter((settlement) => settlement === "ack")).toHaveLength(1);
    expect(await deliveryRow(id)).toMatchObject({ attempts: 1, schedule_step: 1 });

    // A third copy while the next attempt is a minute away: acked, no POST, nothing counted.
    await sql("UPDATE webhook_deliveries SET next_attempt_at = ?2 WHERE id = ?1", id, new Date(Date.now() + 60_000).toISOString());
    expect(await deliverOne({ body: { deliveryId: id }, attempts: 1 }, context)).toBe("ack");
    expect(posts).toHaveLength(2);
    expect(await deliveryRow(id)).toMatchObject({ attempts: 1, schedule_step: 1 });
  });

  it("never fail a delivery another copy delivered meanwhile", async () => {
    const { deliveryIds } = await pendingDeliveries(owner.key, [20]);
    const id = deliveryIds[0]!;
    const other = consumerContext({ fetch: receivers().fetch });
    // This copy has read the row as pending; before it settles, the other copy delivers it; then this one finds no live key.
    const late = consumerContext({
      fetch: receivers().fetch,
      budgetLiveness: async () => {
        expect(await deliverOne({ body: { deliveryId: id }, attempts: 1 }, other)).toBe("ack");
        return "dead";
      },
    });
    expect(await deliverOne({ body: { deliveryId: id }, attempts: 1 }, late)).toBe("ack");
    expect(await deliveryRow(id)).toMatchObject({ outcome: "delivered", last_status: 200 });
  });
});

describe("what cannot be delivered", () => {
  it("fails a delivery whose secret cannot be opened (it never could), rather than retrying it for ever", async () => {
    const { deliveryIds } = await pendingDeliveries(owner.key, [21]);
    const { posts, fetch } = receivers();
    expect(await deliverOne({ body: { deliveryId: deliveryIds[0]! }, attempts: 1 }, consumerContext({ fetch, sealingKey: "another-sealing-key" }))).toBe("ack");
    expect(posts).toEqual([]);
    expect(await deliveryRow(deliveryIds[0]!)).toMatchObject({ outcome: "failed", last_error: "the endpoint's secret cannot be opened (WEBHOOK_SECRETS_KEY changed?)" });
  });

  it("asks again later about a budget none of whose keys is listed yet (a key made a moment ago), failing nothing", async () => {
    const { deliveryIds } = await pendingDeliveries(owner.key, [22]);
    const { posts, fetch } = receivers();
    const unseen = consumerContext({ fetch, budgetLiveness: async () => "unknown" });
    expect(await deliverOne({ body: { deliveryId: deliveryIds[0]! }, attempts: 1 }, unseen)).toEqual({ retryAfterSeconds: 30 });
    expect(posts).toEqual([]);
    expect(await deliveryRow(deliveryIds[0]!)).toMatchObject({ outcome: "pending", attempts: 0, schedule_step: 0 });
    const listed = await budgetLiveness({ list: async () => ({ keys: [], list_complete: true, cacheStatus: null }) } as unknown as KVNamespace, "key_nobodyknowsthis", new TtlCache(10));
    expect(listed).toBe("unknown");
  });
});

describe("a slow receiver beside a healthy one", () => {
  async function slowAndHealthy() {
    const slowKey = await storeTestKey({ scopes: ["webhooks:manage"] });
    const slow = await pendingDeliveries(slowKey.key, [8], "https://slow.example/hooks");
    const healthy = await pendingDeliveries(owner.key, [], "https://healthy.example/hooks");
    await seedOrders([{ id: 9 }]);
    const { queue, sent } = recordingQueue();
    await dispatchEvents(env.DB, queue, "0", new Date().toISOString());
    const healthyId = sent.find((message) => message.deliveryId.includes(healthy.endpointId.slice(3)))!.deliveryId;
    const slowId = sent.find((message) => message.deliveryId.includes(slow.endpointId.slice(3)) && message.deliveryId !== slow.deliveryIds[0])!.deliveryId;
    // The slow receiver answers nothing; the test plays its timeout (AbortSignal.timeout) running out.
    const timeouts: (() => void)[] = [];
    const { fetch, posts } = receivers((url) =>
      url.startsWith("https://slow.")
        ? new Promise<Response>((_, reject) => timeouts.push(() => reject(Object.assign(new Error("timed out"), { name: "TimeoutError" }))))
        : new Response(null, { status: 204 }),
    );
    return { healthyId, slowId, slowEndpoint: slow.endpointId, fetch, posts, timeouts };
  }

  it("holds back nothing of its batch-mates, and past the fast lane's 2 s moves to the slow lane, where it gets its 10 s", async () => {
    const { healthyId, slowId, slowEndpoint, fetch, timeouts } = await slowAndHealthy();
    const slowMessage = queuedMessage(slowId);
    const healthyMessage = queuedMessage(healthyId);
    const context = consumerContext({ fetch });
    const done = consumeDeliveries(queuedBatch("store-orders-webhooks", [slowMessage.message, healthyMessage.message]), context);

    await expect.poll(() => healthyMessage.settled).toEqual([{ how: "ack" }]);
    expect(await deliveryRow(healthyId)).toMatchObject({ outcome: "delivered", last_status: 204 });
    expect(slowMessage.settled).toEqual([]);
    timeouts.shift()!();
    await done;
    // Not an attempt against the schedule: moved, and its endpoint's next deliveries go straight to the slow lane.
    expect(slowMessage.settled).toEqual([{ how: "ack" }]);
    expect(context.slowed).toEqual([{ deliveryId: slowId }]);
    expect(await deliveryRow(slowId)).toMatchObject({ outcome: "pending", attempts: 0, schedule_step: 0 });
    expect(await env.DB.prepare("SELECT slow_until FROM webhook_endpoints WHERE id = ?1").bind(slowEndpoint).first("slow_until")).toEqual(expect.any(String));

    // In the slow lane it runs out its full time, and is retried there on the schedule.
    const inSlowLane = queuedMessage(slowId);
    const slowBatch = consumeDeliveries(queuedBatch("store-orders-webhooks-slow", [inSlowLane.message]), context);
    await expect.poll(() => timeouts.length).toBe(1);
    timeouts.shift()!();
    await slowBatch;
    expect(inSlowLane.settled).toEqual([{ how: "retry", delaySeconds: 1 }]);
    expect(await deliveryRow(slowId)).toMatchObject({ outcome: "pending", attempts: 1, schedule_step: 1, last_error: "no answer within 10 s" });
  });

  it("sends an endpoint that was too slow straight to the slow lane, without a POST, for a while", async () => {
    const { slowId, slowEndpoint, fetch, posts } = await slowAndHealthy();
    await sql("UPDATE webhook_endpoints SET slow_until = ?2 WHERE id = ?1", slowEndpoint, new Date(Date.now() + 60_000).toISOString());
    const message = queuedMessage(slowId);
    const context = consumerContext({ fetch });
    await consumeDeliveries(queuedBatch("store-orders-webhooks", [message.message]), context);
    expect(message.settled).toEqual([{ how: "ack" }]);
    expect(context.slowed).toEqual([{ deliveryId: slowId }]);
    expect(posts).toEqual([]);
    // Once the while is over, the fast lane again.
    await sql("UPDATE webhook_endpoints SET slow_until = ?2 WHERE id = ?1", slowEndpoint, new Date(Date.now() - 1000).toISOString());
    expect(await deliverOne({ body: { deliveryId: slowId }, attempts: 1 }, { ...consumerContext({ fetch: receivers(() => new Response(null, { status: 204 })).fetch }), fastLane: true })).toBe("ack");
  });
});

describe("what the receiver asks for", () => {
  it("disables the endpoint at once on 410 Gone", async () => {
    const { endpointId, deliveryIds } = await pendingDeliveries(owner.key, [10]);
    const { fetch } = receivers(() => new Response("gone", { status: 410 }));
    expect(await deliverOne({ body: { deliveryId: deliveryIds[0]! }, attempts: 1 }, consumerContext({ fetch }))).toBe("ack");
    expect(await deliveryRow(deliveryIds[0]!)).toMatchObject({ outcome: "failed", last_status: 410 });
    expect(await env.DB.prepare("SELECT status, disabled_reason FROM webhook_endpoints WHERE id = ?1").bind(endpointId).first()).toEqual({
      status: "disabled",
      disabled_reason: "the receiver answered 410 Gone",
    });
  });

  it("waits as long as a 429 or 503 asks with Retry-After, never past the schedule's span", async () => {
    const now = Date.parse("2026-11-24T12:00:00Z");
    const { deliveryIds } = await pendingDeliveries(owner.key, [11]);
    const { fetch } = receivers(() => new Response("busy", { status: 429, headers: { "Retry-After": "5" } }));
    expect(await deliverOne({ body: { deliveryId: deliveryIds[0]! }, attempts: 1 }, consumerContext({ fetch, now: () => now }))).toEqual({ retryAfterSeconds: 5 });
    expect(await deliveryRow(deliveryIds[0]!)).toMatchObject({ next_attempt_at: "2026-11-24T12:00:05.000Z", last_status: 429 });

    expect(nextDelaySeconds([1, 2, 3], 1, 503, 2)).toBe(2);
    expect(nextDelaySeconds([1, 2, 3], 1, 503, 3600)).toBe(6);
    expect(nextDelaySeconds([10, 60], 1, 503, 2)).toBe(10);
    expect(nextDelaySeconds([1, 2, 3], 2, 500, 3600)).toBe(2);
    expect(retryAfterSeconds("120", now)).toBe(120);
    expect(retryAfterSeconds("Tue, 24 Nov 2026 12:01:00 GMT", now)).toBe(60);
    expect(retryAfterSeconds("soon", now)).toBeNull();
  });
});

describe("a budget with no live key", () => {
  it("gets nothing delivered once its key is revoked or expired, and again once a live key of the budget exists", async () => {
    const { deliveryIds } = await pendingDeliveries(owner.key, [12, 13, 14]);
    const { posts, fetch } = receivers();
    // Revoked, as `npm run keys -- revoke` writes it.
    await putApiKey(env.API_KEYS, owner.key, { ...owner.record, revokedAt: new Date(Date.now() - 1000).toISOString() });
    expect(await deliverOne({ body: { deliveryId: deliveryIds[0]! }, attempts: 1 }, consumerContext({ fetch }))).toBe("ack");
    expect(posts).toEqual([]);
    expect(await deliveryRow(deliveryIds[0]!)).toMatchObject({ outcome: "failed", last_error: "the endpoint's budget has no live key (revoked or expired)" });

    // A key of the budget that has expired: still nothing.
    const expired = newApiKey("so_test_", { plan: "pro", name: "rotated", budget: owner.record.id, expiresAt: new Date(Date.now() - 1000).toISOString() });
    await putApiKey(env.API_KEYS, expired.key, expired.record);
    expect(await deliverOne({ body: { deliveryId: deliveryIds[1]! }, attempts: 1 }, consumerContext({ fetch }))).toBe("ack");
    expect(posts).toEqual([]);

    // A live key of the budget (a rotation's new key): delivered again.
    const live = newApiKey("so_test_", { plan: "pro", name: "rotated", budget: owner.record.id });
    await putApiKey(env.API_KEYS, live.key, live.record);
    expect(await deliverOne({ body: { deliveryId: deliveryIds[2]! }, attempts: 1 }, consumerContext({ fetch }))).toBe("ack");
    expect(posts).toHaveLength(1);
  });

  it("finds a live key stored before budgets were listed beside a revoked key of the same budget that is listed", async () => {
    const legacyPut = { put: async (name: string, value: string, options?: unknown) => void (name.startsWith("budget:") || (await env.API_KEYS.put(name, value, options as KVNamespacePutOptions))) };
    const first = newApiKey("so_test_", { plan: "pro", name: "first" });
    const rotated = newApiKey("so_test_", { plan: "pro", name: "rotated", budget: first.record.id });
    await putApiKey(legacyPut, first.key, first.record);
    await putApiKey(legacyPut, rotated.key, rotated.record);
    // Revoked since (the runbook's "revoke the old key"): that write lists it, revoked; the rotated key is not listed.
    await putApiKey(env.API_KEYS, first.key, { ...first.record, revokedAt: new Date().toISOString() });
    expect(await budgetLiveness(env.API_KEYS, first.record.id, new TtlCache(10))).toBe("live");
  });

  it("finds the keys of a budget stored before budgets were listed", async () => {
    const legacy = newApiKey("so_test_", { plan: "pro", name: "legacy" });
    // Only the record and the id entry, as keys made before the budget entry existed.
    await putApiKey({ put: async (name: string, value: string, options?: unknown) => void (name.startsWith("budget:") || (await env.API_KEYS.put(name, value, options as KVNamespacePutOptions))) }, legacy.key, legacy.record);
    expect(await budgetLiveness(env.API_KEYS, legacy.record.id, new TtlCache(10))).toBe("live");
    await putApiKey({ put: async (name: string, value: string, options?: unknown) => void (name.startsWith("budget:") || (await env.API_KEYS.put(name, value, options as KVNamespacePutOptions))) }, legacy.key, { ...legacy.record, revokedAt: new Date().toISOString() });
    expect(await budgetLiveness(env.API_KEYS, legacy.record.id, new TtlCache(10))).toBe("dead");
  });
});
