import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { budgetLiveness } from "../../../src/keys/live-budget";
import { TtlCache } from "../../../src/lib/ttl-cache";
import { deliverOne, nextDelaySeconds, retryAfterSeconds, type DeliveryContext } from "../../../src/webhooks/delivery-attempt";
import { consumeDeliveries, type ConsumerContext } from "../../../src/webhooks/queue-consumer";
import { dispatchEvents, type DeliveryMessage } from "../../../src/webhooks/dispatch-pass";
import { OVERDUE_AFTER_MS, resendOverdueDeliveries } from "../../../src/webhooks/resend-overdue-deliveries";
import { FAILED_PASS_RETRY_MAX_MS, failedPassRetryMs, type WebhookDispatcher } from "../../../src/webhooks/dispatcher-object";
import { putApiKey, newApiKey } from "../../../scripts/lib/issue-key";
import { outageD1 } from "../../support/faults";
import { apiWith } from "../../support/request";
import { seedOrders } from "../../support/seed";
import { storeTestKey, type TestKey } from "../../support/test-keys";
import { freshWebhookOwner, makeEndpoint, queuedBatch, queuedMessage, recordingQueue } from "../../support/webhook-fixtures";

/**
 * Webhook delivery under faults (docs/design/order-events.md#faults): D1
 * failing for a stretch of the consumer's, the dead-letter consumer's and
 * the dispatcher's calls; a receiver that hangs beside a healthy one; a
 * receiver that says 410 or asks for time; a budget whose keys are revoked
 * or expired. "None lost" is checked by delivering everything after the fault.
 */
const sql = (statement: string, ...values: unknown[]) => env.DB.prepare(statement).bind(...values).run();
const deliveryRow = (id: string) =>
  env.DB.prepare("SELECT outcome, attempts, schedule_step, last_status, last_error, next_attempt_at FROM webhook_deliveries WHERE id = ?1").bind(id).first();

let owner: TestKey;
beforeEach(async () => {
  owner = await freshWebhookOwner();
});

/** A receiver per URL: answers the statuses given in turn (200 after), or what `answer` makes; records each POST. */
function receivers(answer: (url: string, signal: AbortSignal | undefined) => Promise<Response> | Response = () => new Response("ok")) {
  const posts: { url: string; webhookId: string }[] = [];
  const fetch = (async (url: string, init: RequestInit) => {
    posts.push({ url, webhookId: new Headers(init.headers).get("webhook-id")! });
    return answer(url, init.signal ?? undefined);
  }) as unknown as typeof globalThis.fetch;
  return { posts, fetch };
}

function consumerContext(overrides: Partial<ConsumerContext> & Pick<DeliveryContext, "fetch">): ConsumerContext & { resent: DeliveryMessage[]; slowed: DeliveryMessage[] } {
  const resent: DeliveryMessage[] = [];
  const slowed: DeliveryMessage[] = [];
  return {
    db: env.DB,
    sealingKey: env.WEBHOOK_SECRETS_KEY!,
    retrySeconds: [1, 2, 3],
    now: Date.now,
    budgetLiveness: (budget) => budgetLiveness(env.API_KEYS, budget, new TtlCache(10)),
    resend: async (message) => void resent.push(message),
    toSlowLane: async (message) => void slowed.push(message),
    resent,
    slowed,
    ...overrides,
  };
}

/** Pending deliveries of new orders to an endpoint of the owner's budget; their ids, in the order made. */
async function pendingDeliveries(ids: number[], url = "https://receiver.example/hooks", key = owner.key): Promise<{ endpointId: string; deliveryIds: string[] }> {
  const made = await makeEndpoint(key, { url });
  await seedOrders(ids.map((id) => ({ id })));
  const { queue, sent } = recordingQueue();
  await dispatchEvents(env.DB, queue, "0", new Date().toISOString());
  return { endpointId: made.id, deliveryIds: sent.map((message) => message.deliveryId) };
}

describe("a D1 outage during delivery", () => {
  it("retries each message on its own with backoff, spends none of the receiver's schedule, and delivers every one once D1 is back", async () => {
    const { deliveryIds } = await pendingDeliveries([1, 2, 3]);
    const outage = outageD1();
    const { posts, fetch } = receivers();
    const context = consumerContext({ db: outage.db, fetch });

    // Down: every message of the batch comes back after its own delay, more than the queue's max_retries (3) times.
    outage.setDown(true);
    const delays: number[] = [];
    for (const attempts of [1, 2, 3, 4, 5, 6, 7]) {
      const messages = deliveryIds.map((id) => queuedMessage(id, attempts));
      await consumeDeliveries(queuedBatch("store-orders-webhooks", messages.map((m) => m.message)), context);
      for (const { settled } of messages) expect(settled).toEqual([{ how: "retry", delaySeconds: expect.any(Number) }]);
      delays.push(messages[0]!.settled[0]!.delaySeconds!);
    }
    expect(delays).toEqual([1, 2, 4, 8, 16, 30, 30]);
    expect(posts).toEqual([]);

    // The queue gave up on one (its retries ran out): the dead-letter consumer, D1 still down, retries it too.
    const dead = queuedMessage(deliveryIds[0]!, 1);
    await consumeDeliveries(queuedBatch("store-orders-webhooks-dlq", [dead.message]), context);
    expect(dead.settled).toEqual([{ how: "retry", delaySeconds: 1 }]);

    // Back: the dead letter is not a failed delivery (the receiver was never asked): it goes back to the delivery queue.
    outage.setDown(false);
    const again = queuedMessage(deliveryIds[0]!, 2);
    await consumeDeliveries(queuedBatch("store-orders-webhooks-dlq", [again.message]), context);
    expect(again.settled).toEqual([{ how: "ack" }]);
    expect(context.resent).toEqual([{ deliveryId: deliveryIds[0] }]);
    expect(await deliveryRow(deliveryIds[0]!)).toMatchObject({ outcome: "pending", schedule_step: 0 });

    const messages = deliveryIds.map((id) => queuedMessage(id, 8));
    await consumeDeliveries(queuedBatch("store-orders-webhooks", messages.map((m) => m.message)), context);
    for (const { settled } of messages) expect(settled).toEqual([{ how: "ack" }]);
    expect(posts.map((post) => post.webhookId).sort()).toHaveLength(3);
    expect(new Set(posts.map((post) => post.webhookId)).size).toBe(3);
    for (const id of deliveryIds) expect(await deliveryRow(id)).toMatchObject({ outcome: "delivered", attempts: 1 });
  });

  it("settles the batch-mates of a message whose D1 call fails: each posted once, the failed one retried alone", async () => {
    const { deliveryIds } = await pendingDeliveries([4, 5, 6]);
    const failing = deliveryIds[1]!;
    const outage = outageD1();
    const { posts, fetch } = receivers();
    // D1 fails only while the second delivery's row is read.
    const db = new Proxy(outage.db, {
      get(target, property) {
        if (property !== "prepare") return Reflect.get(target, property);
        return (query: string) => {
          const statement = target.prepare(query);
          return new Proxy(statement, {
            get(inner, name) {
              if (name === "bind") return (...values: unknown[]) => (values[0] === failing && query.includes("FROM webhook_deliveries d") ? outageStatement() : inner.bind(...values));
              const value = Reflect.get(inner, name);
              return typeof value === "function" ? value.bind(inner) : value;
            },
          });
        };
      },
    });
    const messages = deliveryIds.map((id) => queuedMessage(id));
    await consumeDeliveries(queuedBatch("store-orders-webhooks", messages.map((m) => m.message)), consumerContext({ db, fetch }));
    expect(messages.map((m) => m.settled)).toEqual([[{ how: "ack" }], [{ how: "retry", delaySeconds: 1 }], [{ how: "ack" }]]);
    expect(posts).toHaveLength(2);
    expect(await deliveryRow(failing)).toMatchObject({ outcome: "pending", attempts: 0 });
  });

  it("records a failure only when the receiver spent the schedule, however often the queue retried", async () => {
    const { endpointId, deliveryIds } = await pendingDeliveries([7]);
    const id = deliveryIds[0]!;
    const { fetch } = receivers(() => new Response("down", { status: 500 }));
    const context = consumerContext({ fetch });
    for (const step of [1, 2, 3, 4]) {
      const { message, settled } = queuedMessage(id, step + 10);
      await consumeDeliveries(queuedBatch("store-orders-webhooks", [message]), context);
      expect(settled).toEqual([{ how: "retry", delaySeconds: [1, 2, 3, 3][step - 1] }]);
      await sql("UPDATE webhook_deliveries SET next_attempt_at = NULL WHERE id = ?1", id);
    }
    expect(await deliveryRow(id)).toMatchObject({ outcome: "pending", schedule_step: 4, attempts: 4 });
    // Its dead letter is a failed delivery now, and the endpoint that got nothing through is disabled.
    const dead = queuedMessage(id);
    await consumeDeliveries(queuedBatch("store-orders-webhooks-dlq", [dead.message]), context);
    expect(dead.settled).toEqual([{ how: "ack" }]);
    expect(context.resent).toEqual([]);
    expect(await deliveryRow(id)).toMatchObject({ outcome: "failed" });
    expect(await env.DB.prepare("SELECT status FROM webhook_endpoints WHERE id = ?1").bind(endpointId).first("status")).toBe("disabled");
  });
});

/** A statement whose every call fails, as one read during an outage. */
function outageStatement(): D1PreparedStatement {
  const fail = () => Promise.reject(new Error("D1_ERROR: Network connection lost."));
  return { bind: () => outageStatement(), first: fail, all: fail, run: fail, raw: fail } as unknown as D1PreparedStatement;
}

describe("two messages of one delivery (at least once)", () => {
  it("count one step of the schedule between them, and a copy that comes before the next attempt is due is dropped unsent", async () => {
    const { deliveryIds } = await pendingDeliveries([19]);
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
    const { deliveryIds } = await pendingDeliveries([20]);
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
    const { deliveryIds } = await pendingDeliveries([21]);
    const { posts, fetch } = receivers();
    expect(await deliverOne({ body: { deliveryId: deliveryIds[0]! }, attempts: 1 }, consumerContext({ fetch, sealingKey: "another-sealing-key" }))).toBe("ack");
    expect(posts).toEqual([]);
    expect(await deliveryRow(deliveryIds[0]!)).toMatchObject({ outcome: "failed", last_error: "the endpoint's secret cannot be opened (WEBHOOK_SECRETS_KEY changed?)" });
  });

  it("asks again later about a budget none of whose keys is listed yet (a key made a moment ago), failing nothing", async () => {
    const { deliveryIds } = await pendingDeliveries([22]);
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
    const slow = await pendingDeliveries([8], "https://slow.example/hooks", slowKey.key);
    const healthy = await pendingDeliveries([], "https://healthy.example/hooks");
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
    const { endpointId, deliveryIds } = await pendingDeliveries([10]);
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
    const { deliveryIds } = await pendingDeliveries([11]);
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
    const { deliveryIds } = await pendingDeliveries([12, 13, 14]);
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

describe("the sweeper", () => {
  it("sends again a pending delivery long past due (its message lost), and leaves the ones that are not", async () => {
    const { deliveryIds } = await pendingDeliveries([15, 16, 17]);
    const now = Date.now();
    const [lost, neverTried, onTime] = deliveryIds as [string, string, string];
    await sql("UPDATE webhook_deliveries SET next_attempt_at = ?2 WHERE id = ?1", lost, new Date(now - OVERDUE_AFTER_MS - 1000).toISOString());
    await sql("UPDATE webhook_deliveries SET created_at = ?2 WHERE id = ?1", neverTried, new Date(now - OVERDUE_AFTER_MS - 1000).toISOString());
    await sql("UPDATE webhook_deliveries SET next_attempt_at = ?2 WHERE id = ?1", onTime, new Date(now - 1000).toISOString());
    const { queue, sent } = recordingQueue();
    expect(await resendOverdueDeliveries(env.DB, queue, now)).toBe(2);
    expect(sent.map((message) => message.deliveryId).sort()).toEqual([lost, neverTried].sort());
    // Due now: the next sweep leaves them to their new messages.
    expect(await deliveryRow(lost)).toMatchObject({ next_attempt_at: new Date(now).toISOString() });
    expect(await resendOverdueDeliveries(env.DB, queue, now + 1000)).toBe(0);

    // A deleted endpoint's pending deliveries wait for the prune: not sent again.
    await sql("DELETE FROM webhook_endpoints");
    await sql("UPDATE webhook_deliveries SET next_attempt_at = ?1", new Date(now - OVERDUE_AFTER_MS - 1000).toISOString());
    expect(await resendOverdueDeliveries(env.DB, queue, now)).toBe(0);
  });
});

describe("the sweeper after a long outage", () => {
  it("sends every overdue delivery in one sweep, a queue batch at a time, up to its bound", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    const due = new Date(Date.now() - OVERDUE_AFTER_MS - 60_000).toISOString();
    await sql(
      `INSERT INTO webhook_deliveries (id, endpoint_id, event_seq, outcome, created_at, updated_at, next_attempt_at)
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1250) SELECT 'wd_lost_' || i, ?1, i, 'pending', ?2, ?2, ?2 FROM n`,
      made.id,
      due,
    );
    const batches: number[] = [];
    const queue = { sendBatch: async (messages: Iterable<MessageSendRequest<DeliveryMessage>>) => void batches.push([...messages].length) };
    expect(await resendOverdueDeliveries(env.DB, queue as unknown as Queue<DeliveryMessage>, Date.now())).toBe(1000);
    expect(batches).toEqual(Array(10).fill(100));
    expect(await resendOverdueDeliveries(env.DB, queue as unknown as Queue<DeliveryMessage>, Date.now())).toBe(250);
  });
});

describe("the dispatcher in an outage", () => {
  const dispatcher = (name: string) => env.WEBHOOK_DISPATCHER.getByName(name);
  /**
   * Runs the object's alarm with the bindings given (a failing D1), as the
   * platform would; answers when it set its next one, and takes that one
   * back, so the platform runs no pass of its own between the test's.
   */
  const passWith = (stub: DurableObjectStub<WebhookDispatcher>, bindings: Env) =>
    runInDurableObject(stub, async (instance: WebhookDispatcher, state) => {
      const object = instance as unknown as { env: Env };
      const real = object.env;
      object.env = bindings;
      try {
        await instance.alarm();
      } finally {
        object.env = real;
      }
      const next = await state.storage.getAlarm();
      await state.storage.deleteAlarm();
      return next;
    });

  it("never lets its alarm die: a failed pass is tried again with backoff, mark unmoved, and delivers once D1 is back", async () => {
    await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    const stub = dispatcher("outage-test");
    await passWith(stub, env);
    const markBefore = await stub.mark();
    await seedOrders([{ id: 18 }]);

    const outage = outageD1();
    outage.setDown(true);
    for (let failed = 1; failed <= 8; failed++) {
      // The pass's own clock lies between these two: its next alarm is the backoff after it, however busy the machine.
      const from = Date.now();
      const at = await passWith(stub, { ...env, DB: outage.db });
      const to = Date.now();
      expect(at).not.toBeNull();
      expect(at!).toBeGreaterThanOrEqual(from + failedPassRetryMs(failed));
      expect(at!).toBeLessThanOrEqual(to + failedPassRetryMs(failed));
    }
    // 1, 2, 4, 8 s, then never more than FAILED_PASS_RETRY_MAX_MS: however long the outage, a pass comes within that of its end.
    expect([1, 2, 3, 4, 5, 8, 100].map(failedPassRetryMs)).toEqual([1000, 2000, 4000, 8000, FAILED_PASS_RETRY_MAX_MS, FAILED_PASS_RETRY_MAX_MS, FAILED_PASS_RETRY_MAX_MS]);
    expect(await stub.mark()).toBe(markBefore);

    const { queue, sent } = recordingQueue();
    expect(await passWith(stub, { ...env, WEBHOOK_DELIVERIES: queue as unknown as Env["WEBHOOK_DELIVERIES"] })).not.toBeNull();
    expect(sent).toHaveLength(1);
    expect(await stub.mark()).not.toBe(markBefore);
    expect(await runInDurableObject(stub, (_, state) => state.storage.kv.get("failedPasses"))).toBeUndefined();
  });

  it("is woken for a new endpoint even when the first call to it fails", async () => {
    let calls = 0;
    const wakes: number[] = [];
    const dispatcher = {
      getByName: () => ({
        wake: async () => {
          wakes.push(++calls);
          if (calls === 1) throw new Error("the object was restarting");
        },
      }),
    };
    const response = await apiWith({ ...env, WEBHOOK_DISPATCHER: dispatcher as unknown as Env["WEBHOOK_DISPATCHER"] }, "/v2/webhook-endpoints", {
      method: "POST",
      key: owner.key,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ url: "https://receiver.example/hooks" }),
    });
    expect(response.status).toBe(201);
    await expect.poll(() => wakes).toEqual([1, 2]);
  });

  it("sets an alarm on a nudge when a watching dispatcher has lost its own", async () => {
    await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    const stub = dispatcher("lost-alarm-test");
    await passWith(stub, env);
    expect(await runInDurableObject(stub, (_, state) => state.storage.getAlarm())).toBeNull();
    await stub.nudge();
    // The nudge's alarm runs at once; while it runs none is set, and it sets the next (the dispatcher watches).
    await expect.poll(() => runInDurableObject(stub, (_, state) => state.storage.getAlarm())).not.toBeNull();
  });
});
