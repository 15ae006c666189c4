import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { consumeDeliveries } from "../../../src/webhooks/queue-consumer";
import type { DeliveryMessage } from "../../../src/webhooks/dispatch-pass";
import { OVERDUE_AFTER_MS, resendOverdueDeliveries } from "../../../src/webhooks/resend-overdue-deliveries";
import { FAILED_PASS_RETRY_MAX_MS, failedPassRetryMs, type WebhookDispatcher } from "../../../src/webhooks/dispatcher-object";
import { outageD1 } from "../../support/faults";
import { apiWith } from "../../support/request";
import { seedOrders } from "../../support/seed";
import { webhookOwnerOfEachTest, consumerContext, deliveryRow, makeEndpoint, outageStatement, pendingDeliveries, queuedBatch, queuedMessage, receivers, recordingQueue } from "../../support/webhook-fixtures";

/**
 * Webhook delivery through outages (docs/design/order-events.md#faults): D1
 * failing for a stretch of the consumer's, the dead-letter consumer's and
 * the dispatcher's calls, and the sweeper that sends again what fell out of
 * the queue. "None lost" is checked by delivering everything after the fault.
 */
const sql = (statement: string, ...values: unknown[]) => env.DB.prepare(statement).bind(...values).run();

const owner = webhookOwnerOfEachTest();

describe("a D1 outage during delivery", () => {
  it("retries each message on its own with backoff, spends none of the receiver's schedule, and delivers every one once D1 is back", async () => {
    const { deliveryIds } = await pendingDeliveries(owner.key, [1, 2, 3]);
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
    const { deliveryIds } = await pendingDeliveries(owner.key, [4, 5, 6]);
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
    const { endpointId, deliveryIds } = await pendingDeliveries(owner.key, [7]);
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

describe("the sweeper", () => {
  it("sends again a pending delivery long past due (its message lost), and leaves the ones that are not", async () => {
    const { deliveryIds } = await pendingDeliveries(owner.key, [15, 16, 17]);
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
