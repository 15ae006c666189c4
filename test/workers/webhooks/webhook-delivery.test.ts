import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { countStorage } from "../../../bench/billed-calls";
import { dispatchEvents } from "../../../src/webhook-delivery/dispatch-pass";
import { DISPATCHER_NAME } from "../../../src/webhook-delivery/dispatcher-calls";
import { deliveryIdOf, laneOf } from "../../../src/webhook-delivery/lane-calls";
import { DELIVERY_LOG_MS, PRUNE_GAP_MS } from "../../../src/webhook-delivery/lane-retention";
import { appendSettled, CURSOR_LAG, logCursor } from "../../../src/webhook-delivery/lane-log";
import { failedAttemptsSince, failedRange } from "../../../src/webhook-delivery/lane-settled";
import type { WebhookLane } from "../../../src/webhook-delivery/lane-object";
import { signWebhook } from "../../../src/webhook-delivery/webhook-signature";
import { apiWith } from "../../support/request";
import {
  dispatchQuietly,
  feedHead,
  freshWebhookOwner,
  laneDeliveries,
  laneDelivery,
  makeEndpoint,
  pendingDeliveries,
  quietLanes,
  runLaneOnce,
  withoutDispatcher,
} from "../../support/webhook-fixtures";
import { seedOrders } from "../../support/seed";
import { storeTestKey, type TestKey } from "../../support/test-keys";

/**
 * Webhook delivery (docs/design/order-events.md#dispatch, #lanes): the
 * dispatcher's pass hands each endpoint's lane its events; a lane's run
 * posts them, with a receiver of the test's making; the deliveries list and
 * a retry; the signature against the Standard Webhooks vector.
 */
const sql = (statement: string, ...values: unknown[]) =>
  env.DB.prepare(statement)
    .bind(...values)
    .run();
const dispatchMark = async () =>
  String(await env.DB.prepare("SELECT mark FROM webhook_dispatch").first<number>("mark"));

let owner: TestKey;
beforeEach(async () => {
  owner = await freshWebhookOwner();
});

const head = feedHead;
const endpoint = (body: { url: string; types?: string[]; rateLimit?: number }, key = owner.key) =>
  makeEndpoint(key, body);

/** A receiver that answers the statuses given, in turn (0: no connection), and records what it got. */
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

describe("the dispatcher's pass", () => {
  it("hands each lane the events its endpoint wants, after the endpoint was made; a pass run again makes none twice", async () => {
    await seedOrders([{ id: 1 }]);
    const cancelled = await endpoint({ url: "https://a.example/", types: ["order.cancelled"] });
    const every = await endpoint(
      { url: "https://b.example/" },
      (await storeTestKey({ scopes: ["orders:read", "webhooks:manage"] })).key,
    );
    const mark = await head();
    await seedOrders([{ id: 2 }]);
    await sql("UPDATE orders SET status = 'cancelled' WHERE id = 1");
    const handed: [string, string[]][] = [];
    const pass = await dispatchQuietly(async (id, seqs) => {
      handed.push([id, seqs]);
      return quietLanes(id, seqs);
    });
    const created = String(Number(mark) + 1);
    const cancel = String(Number(mark) + 2);
    expect(handed.sort()).toEqual(
      [
        [cancelled.id, [cancel]],
        [every.id, [created, cancel]],
      ].sort(),
    );
    expect(pass).toMatchObject({ mark: cancel, more: false, endpoints: 2, enqueued: 3, failedLanes: 0 });
    expect(await dispatchMark()).toBe(cancel);

    // Run again from the old mark (the mark lost): the lanes read the feed from their own cursors, so the same events
    // handed again are the same deliveries, still owed, none made twice.
    await sql("UPDATE webhook_dispatch SET mark = ?1", mark);
    expect(await dispatchQuietly()).toMatchObject({ mark: cancel, enqueued: 3 });
    expect((await laneDeliveries(every.id)).map((row) => String(row.seq))).toEqual([created, cancel]);
  });

  it("reads events by the sequence's number, not its digits, where it crosses into another length: none skipped, none out of order", async () => {
    const made = await endpoint({ url: "https://a.example/", types: ["order.created"] });
    // The next 151 events get 950..1100: sorted as text, "1000".."1099" would fill the first pass and 950..999 be
    // passed over.
    await sql("UPDATE sqlite_sequence SET seq = 949 WHERE name = 'order_events'");
    await sql("UPDATE webhook_dispatch SET mark = 949");
    await sql(
      `INSERT INTO orders (id, pet_id, quantity, status, complete, created_at, updated_at)
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 151) SELECT i, 1, 1,
         'pending', 0, '2026-11-01T00:00:00Z', '2026-11-01T00:00:00Z' FROM n`,
    );
    expect(await dispatchQuietly()).toMatchObject({ mark: "1049", more: true, enqueued: 100 });
    expect(await dispatchQuietly()).toMatchObject({ mark: "1100", more: false, enqueued: 51 });
    expect((await laneDeliveries(made.id)).map((row) => row.seq)).toEqual(
      Array.from({ length: 151 }, (_, index) => 950 + index),
    );

    // The deliveries list, newest first by number too.
    const listed = await (await apiWith(env, `/v2/webhook-endpoints/${made.id}/deliveries`, { key: owner.key })).json<{
      data: { eventId: string }[];
    }>();
    expect(listed.data.slice(0, 2).map((delivery) => delivery.eventId)).toEqual(["evt_1100", "evt_1099"]);
  });

  it("hands nothing to a disabled endpoint, and with no endpoint moves its mark to the head", async () => {
    const made = await endpoint({ url: "https://a.example/" });
    await sql("UPDATE webhook_endpoints SET status = 'disabled' WHERE id = ?1", made.id);
    await seedOrders([{ id: 3 }]);
    const handed: string[] = [];
    const pass = await dispatchQuietly(async (id, seqs) => {
      handed.push(id);
      return quietLanes(id, seqs);
    });
    expect(pass).toMatchObject({ mark: await head(), more: false, endpoints: 0, enqueued: 0 });
    expect(handed).toEqual([]);
  });

  it("moves its mark up to the oldest endpoint's start when nothing follows it: the events before are nobody's, and no lag is left that no pass could take away", async () => {
    // A dispatcher that slept with no endpoints (no cron locally) left its mark far below the head.
    await seedOrders([{ id: 4 }, { id: 5 }, { id: 6 }]);
    await sql("UPDATE webhook_dispatch SET mark = 0");
    const made = await endpoint({ url: "https://a.example/" });
    expect(await dispatchQuietly()).toMatchObject({ mark: await head(), more: false, endpoints: 1, enqueued: 0 });
    expect(await dispatchMark()).toBe(await head());
    expect(await laneDeliveries(made.id)).toEqual([]);
    // What follows the endpoint's start is handed out as ever.
    await seedOrders([{ id: 7 }]);
    expect(await dispatchQuietly()).toMatchObject({ mark: await head(), enqueued: 1 });
  });

  it("keeps its mark in D1: a dispatcher whose storage is lost resumes where it was, sending nothing again", async () => {
    const made = await endpoint({ url: "https://a.example/", types: ["order.created"] });
    await seedOrders([{ id: 4 }]);
    const stub = env.WEBHOOK_DISPATCHER.getByName(DISPATCHER_NAME);
    const fetched = vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("ok"));
    await runInDurableObject(stub, async (instance) => instance.alarm());
    const reached = await dispatchMark();
    expect(reached).toBe(await head());
    await vi.waitFor(async () => expect((await laneDelivery(made.id, reached))?.outcome).toBe("delivered"), {
      timeout: 10_000,
    });
    expect(fetched).toHaveBeenCalledTimes(1);
    // Its storage wiped: the next pass finds the mark in D1 and hands nothing again.
    await runInDurableObject(stub, (_, state) => state.storage.deleteAll());
    await runInDurableObject(stub, async (instance) => instance.alarm());
    expect(await dispatchMark()).toBe(reached);
    expect((await laneDeliveries(made.id)).map((row) => [row.seq, row.attempts])).toEqual([[Number(reached), 1]]);
    expect(fetched).toHaveBeenCalledTimes(1);
  });

  it("is brought forward by a cancel's nudge while it watches, and never woken by one while it sleeps", async () => {
    const stub = env.WEBHOOK_DISPATCHER.getByName("nudge-test");
    await runInDurableObject(stub, (_, state) => state.storage.deleteAlarm());
    const watching = () => runInDurableObject(stub, (_, state) => state.storage.kv.get("watching"));
    await stub.nudge();
    expect(await runInDurableObject(stub, (_, state) => state.storage.getAlarm())).toBeNull();
    expect(await watching()).toBeUndefined();
    // Watching: its next pass is due in a while; the nudge makes it now, and the pass runs.
    const later = Date.now() + 60_000;
    await runInDurableObject(stub, (_, state) => state.storage.setAlarm(later));
    await stub.nudge();
    await vi.waitFor(async () => expect(await watching()).toEqual(expect.any(Boolean)), { timeout: 10_000 });
    expect((await runInDurableObject(stub, (_, state) => state.storage.getAlarm())) ?? 0).toBeLessThan(later);
    // Stopped: a dispatcher left watching would hand the next tests' lanes their events behind their backs.
    await runInDurableObject(stub, (_, state) => state.storage.deleteAlarm());
  });
});

describe("a lane's run", () => {
  async function pendingDelivery(types?: string[]) {
    const made = await endpoint({ url: "https://receiver.example/hooks", ...(types && { types }) });
    await seedOrders([{ id: 9223372036854775807n, petId: 5 }]);
    await dispatchQuietly();
    const [delivery] = await laneDeliveries(made.id);
    return { made, seq: delivery!.seq };
  }

  it("posts the event signed as Standard Webhooks specifies, exact ids, and records it delivered", async () => {
    const { made, seq } = await pendingDelivery();
    const { got, fetch } = receiver(204);
    const now = Date.now() + 1_000;
    expect(await runLaneOnce(made.id, { fetch, now: () => now })).toEqual({
      next: null,
      delivered: 1,
      attempted: 1,
      sent: 1,
    });
    const [post] = got;
    expect(post!.url).toBe("https://receiver.example/hooks");
    const id = post!.headers.get("webhook-id")!;
    expect(id).toBe(`evt_${seq}`);
    expect(post!.headers.get("webhook-timestamp")).toBe(String(Math.floor(now / 1000)));
    expect(post!.headers.get("content-type")).toBe("application/json");
    expect(post!.headers.get("webhook-signature")).toBe(
      await signWebhook(made.secret, id, Math.floor(now / 1000), post!.body),
    );
    expect(post!.body).toContain('"order":{"id":"9223372036854775807","petId":"5",');
    expect(JSON.parse(post!.body)).toMatchObject({ id, type: "order.created" });
    expect(await laneDelivery(made.id, seq)).toMatchObject({
      outcome: "delivered",
      attempts: 1,
      last_status: 204,
      due_at: null,
    });
    // Handed the event again (a pass run twice), the lane sends nothing more.
    await quietLanes(made.id, [String(seq)]);
    expect(await runLaneOnce(made.id, { fetch })).toMatchObject({ attempted: 0 });
    expect(got).toHaveLength(1);
  });

  it("posts ids that Standard Webhooks' own verifier hands back exact, as strings, in order and previous alike", async () => {
    const made = await endpoint({ url: "https://receiver.example/hooks", types: ["order.created", "order.updated"] });
    // Above 2^53 a double cannot tell an id from its neighbours: 9007199254740993 would come back as 9007199254740992.
    await seedOrders([{ id: 9007199254740993n, petId: 9007199254740995n }]);
    await sql("UPDATE orders SET pet_id = '9007199254740997' WHERE id = '9007199254740993'");
    await dispatchQuietly();
    const { got, fetch } = receiver();
    await runLaneOnce(made.id, { fetch, now: () => Date.now() + 1_000 });
    const verified = got.map((post) => new Webhook(made.secret).verify(post.body, Object.fromEntries(post.headers)));
    expect(verified).toEqual([
      expect.objectContaining({
        type: "order.created",
        order: expect.objectContaining({ id: "9007199254740993", petId: "9007199254740995" }),
      }),
      expect.objectContaining({
        type: "order.updated",
        order: expect.objectContaining({ id: "9007199254740993", petId: "9007199254740997" }),
        previous: { petId: "9007199254740995" },
      }),
    ]);
  });

  it("retries on the schedule while the receiver fails, with the same webhook-id, until it answers 2xx", async () => {
    const { made, seq } = await pendingDelivery();
    const { got, fetch } = receiver(500, 0, 200);
    const t0 = Date.now() + 1_000;
    expect(await runLaneOnce(made.id, { fetch, now: () => t0 })).toMatchObject({ next: t0 + 1_000, attempted: 1 });
    expect(await laneDelivery(made.id, seq)).toMatchObject({
      outcome: "pending",
      attempts: 1,
      last_status: 500,
      due_at: t0 + 1_000,
    });
    // Not due yet: nothing is sent.
    expect(await runLaneOnce(made.id, { fetch, now: () => t0 + 999 })).toMatchObject({
      attempted: 0,
      next: t0 + 1_000,
    });
    await runLaneOnce(made.id, { fetch, now: () => t0 + 1_000 });
    expect(await laneDelivery(made.id, seq)).toMatchObject({
      attempts: 2,
      last_status: null,
      last_error: "could not connect",
      due_at: t0 + 3_000,
    });
    await runLaneOnce(made.id, { fetch, now: () => t0 + 3_000 });
    expect(new Set(got.map((post) => post.headers.get("webhook-id"))).size).toBe(1);
    expect(await laneDelivery(made.id, seq)).toMatchObject({ outcome: "delivered", attempts: 3, last_status: 200 });
  });

  it.each([
    [CURSOR_LAG, "leaves its cursor where it stood (a row keys each)"],
    [CURSOR_LAG + 1, "moves its cursor past them (too many to read again)"],
  ])("after a run whose %i events were all refused, %s; each is sent again only by its retry", async (count) => {
    const made = await endpoint({ url: "https://receiver.example/hooks" });
    await seedOrders(Array.from({ length: count }, (_, index) => ({ id: 700 + index })));
    while ((await dispatchQuietly()).more);
    const cursor = () => runInDurableObject(laneOf(env, made.id), (_, state) => logCursor(state.storage.sql));
    const stood = await cursor();
    const t0 = Date.now() + 1_000;
    const { got, fetch } = receiver(...Array<number>(count).fill(503));
    expect(await runLaneOnce(made.id, { fetch, now: () => t0 })).toMatchObject({ attempted: count, delivered: 0 });
    const seqs = (await laneDeliveries(made.id)).map((row) => row.seq);
    expect(await cursor()).toBe(count > CURSOR_LAG ? seqs.at(-1) : stood);
    // Not due yet: the run reads the same events again and sends none.
    expect(await runLaneOnce(made.id, { fetch, now: () => t0 + 500 })).toMatchObject({ attempted: 0 });
    await runLaneOnce(made.id, { fetch, now: () => t0 + 1_000 });
    expect(got.map((post) => Number(post.headers.get("webhook-id")!.slice("evt_".length)))).toEqual([...seqs, ...seqs]);
    expect((await laneDeliveries(made.id)).map((row) => [row.outcome, row.attempts])).toEqual(
      Array(count).fill(["delivered", 2]),
    );
    // Their settling writes the cursor with them.
    expect(await cursor()).toBe(seqs.at(-1));
  });

  it("moves its cursor past an event whose only try failed it for good: no row keys it, and it is sent no more", async () => {
    const { made, seq } = await pendingDelivery();
    const { got, fetch } = receiver(503, 200);
    const t0 = Date.now() + 1_000;
    await runLaneOnce(made.id, { fetch, now: () => t0, retrySeconds: [] });
    expect(await runLaneOnce(made.id, { fetch, now: () => t0 + 1_000 })).toMatchObject({ attempted: 0 });
    expect(got).toHaveLength(1);
    expect(await laneDelivery(made.id, seq)).toMatchObject({ outcome: "failed", attempts: 1, last_status: 503 });
  });

  it("fails the delivery once the receiver refused the whole schedule; its endpoint stays enabled, failing", async () => {
    const { made, seq } = await pendingDelivery();
    const { fetch } = receiver(503, 503, 503, 503);
    const t0 = Date.now() + 1_000;
    for (const at of [0, 1_000, 3_000, 6_000]) await runLaneOnce(made.id, { fetch, now: () => t0 + at });
    expect(await laneDelivery(made.id, seq)).toMatchObject({
      outcome: "failed",
      attempts: 4,
      last_status: 503,
      due_at: null,
    });
    // Disabling is a matter of time, not of one delivery's schedule (webhook-failing-endpoint.test.ts).
    expect(
      await env.DB.prepare("SELECT status, failing_since FROM webhook_endpoints WHERE id = ?1").bind(made.id).first(),
    ).toEqual({ status: "enabled", failing_since: new Date(t0).toISOString() });
    // The next event still goes to it.
    await seedOrders([{ id: 77 }]);
    await dispatchQuietly();
    expect(await laneDeliveries(made.id)).toHaveLength(2);
  });

  it("keeps an endpoint that had a delivery through while one failed", async () => {
    const { made, seq } = await pendingDelivery();
    await seedOrders([{ id: 78 }]);
    await dispatchQuietly();
    const t0 = Date.now() + 1_000;
    // The first event's receiver refuses, the second's takes it; then the first refuses the rest of the schedule.
    const { fetch } = receiver(503, 200, 503, 503, 503);
    for (const at of [0, 1_000, 3_000, 6_000]) await runLaneOnce(made.id, { fetch, now: () => t0 + at });
    expect(await laneDelivery(made.id, seq)).toMatchObject({ outcome: "failed" });
    expect(
      await env.DB.prepare("SELECT status FROM webhook_endpoints WHERE id = ?1").bind(made.id).first("status"),
    ).toBe("enabled");
  });

  it("empties itself when its endpoint was deleted, and never reaches another account's endpoint", async () => {
    const { made } = await pendingDelivery();
    const response = await apiWith(env, `/v2/webhook-endpoints/${made.id}`, { method: "DELETE", key: owner.key });
    expect(response.status).toBe(204);
    await quietLanes(made.id, ["1"]);
    const { got, fetch } = receiver();
    expect(await runLaneOnce(made.id, { fetch })).toBe("endpoint gone");
    expect(got).toEqual([]);
  });

  it("runs from its own alarm, sends with the global fetch, and empties itself through the alarm once the endpoint is gone", async () => {
    const made = await endpoint({ url: "https://receiver.example/hooks" });
    await seedOrders([{ id: 90 }]);
    const fetched = vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("ok"));
    await dispatchEvents(env.DB, (id, seqs) => laneOf(env, id).enqueue(id, seqs));
    await vi.waitFor(async () => expect((await laneDeliveries(made.id))[0]?.outcome).toBe("delivered"), {
      timeout: 10_000,
    });
    expect(fetched).toHaveBeenCalledWith("https://receiver.example/hooks", expect.objectContaining({ method: "POST" }));
    await sql("DELETE FROM webhook_endpoints WHERE id = ?1", made.id);
    await quietLanes(made.id, ["1"]);
    await runInDurableObject(laneOf(env, made.id), (_, state) => state.storage.setAlarm(Date.now()));
    // Run now, unless the platform ran it first: either way the lane empties itself.
    await runDurableObjectAlarm(laneOf(env, made.id));
    await vi.waitFor(async () => expect(await laneDeliveries(made.id)).toEqual([]), { timeout: 10_000 });
  });
});

describe("an endpoint's deliveries", () => {
  it("show an event's own word before a range's that names it too: a range fails only those without one", async () => {
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [91, 92]);
    const at = Date.now();
    const views = await runInDurableObject(laneOf(env, endpointId), (lane: WebhookLane, state) => {
      const { sql } = state.storage;
      appendSettled(sql, [
        {
          seq: seqs[0]!,
          outcome: "delivered",
          attempts: 2,
          lastStatus: 200,
          lastError: null,
          createdAt: at,
          settledAt: at,
          attemptLog: [[at, 200, 5, null, null]],
        },
      ]);
      appendSettled(sql, [failedRange(seqs[0]! - 1, seqs[1]!, "the event is older than the events kept", at, at + 1)]);
      return lane.deliveries(endpointId, 100, 5);
    });
    expect(views.map((view) => [view.eventId, view.outcome, view.attempts])).toEqual([
      [`evt_${seqs[1]}`, "failed", 0],
      [`evt_${seqs[0]}`, "delivered", 2],
    ]);
  });

  it("are listed newest first for the endpoint's account (and for operators), and one is sent again on request with the same event", async () => {
    const made = await endpoint({ url: "https://receiver.example/" });
    await seedOrders([{ id: 11 }]);
    await dispatchQuietly();
    const t0 = Date.now() + 1_000;
    // The first refused for the whole schedule, the second written after and not tried yet.
    const refusing = receiver(500, 500, 500, 500).fetch;
    for (const at of [0, 1_000, 3_000, 6_000]) await runLaneOnce(made.id, { fetch: refusing, now: () => t0 + at });
    await seedOrders([{ id: 12 }]);
    await dispatchQuietly();
    const [first, second] = (await laneDeliveries(made.id)).map((row) => row.seq);
    const listed = await (await apiWith(env, `/v2/webhook-endpoints/${made.id}/deliveries`, { key: owner.key })).json<{
      data: Record<string, unknown>[];
    }>();
    const [firstId, secondId] = [deliveryIdOf(made.id, first!), deliveryIdOf(made.id, second!)];
    expect(listed.data.map((delivery) => [delivery.id, delivery.outcome])).toEqual([
      [secondId, "pending"],
      [firstId, "failed"],
    ]);
    expect(listed.data[1]).toMatchObject({
      id: firstId,
      eventId: `evt_${first}`,
      attempts: 4,
      lastStatus: 500,
      lastError: "the receiver answered 500",
      nextAttemptAt: null,
      outcome: "failed",
    });
    expect((listed.data[1]!.attemptLog as unknown[]).length).toBe(4);
    // An operator reads the same log of any account's endpoint (docs/operations.md#operator-api); an unknown
    // endpoint is
    // 404.
    const asOperator = { key: null, headers: { Authorization: "Bearer operator-token-for-tests" } };
    expect(await (await apiWith(env, `/admin/webhook-endpoints/${made.id}/deliveries`, asOperator)).json()).toEqual(
      listed,
    );
    expect((await apiWith(env, "/admin/webhook-endpoints/we_00000000000000000000/deliveries", asOperator)).status).toBe(
      404,
    );

    // A disabled endpoint's delivery is not sent again: a retry says so until it is enabled again.
    const patch = (status: "enabled" | "disabled") => ({
      method: "PATCH",
      key: owner.key,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ status }),
    });
    expect((await apiWith(withoutDispatcher(), `/v2/webhook-endpoints/${made.id}`, patch("disabled"))).status).toBe(
      200,
    );
    const path = `/v2/webhook-endpoints/${made.id}/deliveries/${firstId}/retry`;
    expect(
      ((await (await apiWith(env, path, { method: "POST", key: owner.key })).json()) as { code: string }).code,
    ).toBe("webhook_endpoint_disabled");
    expect((await apiWith(withoutDispatcher(), `/v2/webhook-endpoints/${made.id}`, patch("enabled"))).status).toBe(200);
    vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("ok"));
    const retry = await apiWith(env, path, { method: "POST", key: owner.key });
    expect(retry.status).toBe(202);
    expect(await retry.json()).toMatchObject({ id: firstId, outcome: "pending", nextAttemptAt: expect.any(String) });
    // The retry woke the lane, which sends it now.
    await vi.waitFor(async () => expect((await laneDelivery(made.id, first!))?.outcome).toBe("delivered"), {
      timeout: 10_000,
    });

    const stranger = (await storeTestKey({ scopes: ["orders:read", "webhooks:manage"] })).key;
    expect((await apiWith(env, `/v2/webhook-endpoints/${made.id}/deliveries`, { key: stranger })).status).toBe(404);
    for (const unknown of ["wd_00000000000000000000_1", `wd_${made.id.slice(3)}_999999`]) {
      const answer = await apiWith(env, `/v2/webhook-endpoints/${made.id}/deliveries/${unknown}/retry`, {
        method: "POST",
        key: owner.key,
      });
      expect(((await answer.json()) as { code: string }).code).toBe("webhook_delivery_not_found");
    }
  });
});

describe("keeping deliveries", () => {
  it("lists the 100 newest deliveries, rows, logged first tries and events waiting alike, each with its 10 newest attempts", async () => {
    const made = await endpoint({ url: "https://receiver.example/" });
    await seedOrders(Array.from({ length: 120 }, (_, index) => ({ id: 5_000 + index })));
    await dispatchQuietly();
    // Every tenth refused (a row of its own), the others logged at their first try; then 20 more not tried yet.
    await runLaneOnce(made.id, {
      fetch: receiver(...Array.from({ length: 120 }, (_, i) => (i % 10 ? 204 : 503))).fetch,
    });
    await seedOrders(Array.from({ length: 20 }, (_, index) => ({ id: 5_200 + index })));
    await dispatchQuietly();
    const all = await laneDeliveries(made.id);
    const newest = all
      .map((row) => row.seq)
      .sort((a, b) => b - a)
      .slice(0, 100);
    const refused = all.filter((row) => row.attempts === 1 && row.outcome === "pending").at(-1)!.seq;
    expect(newest).toContain(refused);
    // That one tried 15 times: its row keeps every attempt, the list shows the 10 newest.
    const tries = Array.from({ length: 15 }, (_, index) => [1_000 + index, 503, 5, null, null]);
    await runInDurableObject(laneOf(env, made.id), (_, state) =>
      state.storage.sql.exec(
        "UPDATE pending_deliveries SET attempts = 15, attempt_log = ?2 WHERE seq = ?1",
        refused,
        JSON.stringify(tries),
      ),
    );
    const listed = await (await apiWith(env, `/v2/webhook-endpoints/${made.id}/deliveries`, { key: owner.key })).json<{
      data: { id: string; attempts: number; attemptLog: { at: string }[] }[];
    }>();
    expect(listed.data.map((delivery) => delivery.id)).toEqual(newest.map((seq) => deliveryIdOf(made.id, seq)));
    const shown = listed.data.find((delivery) => delivery.id === deliveryIdOf(made.id, refused))!;
    expect(shown.attempts).toBe(15);
    expect(shown.attemptLog.map((attempt) => Date.parse(attempt.at))).toEqual(
      tries
        .map(([at]) => at)
        .reverse()
        .slice(0, 10),
    );
  });

  it("prunes a lane's settled deliveries, a block at a time, past the delivery log's 7 days, and keeps the pending ones", async () => {
    const made = await endpoint({ url: "https://kept.example/" });
    const now = Date.now();
    // A minute either side of the week the docs promise, not of whatever the constant says.
    const week = 7 * 86_400_000;
    const old = now - week - 60_000;
    const recent = now - week + 60_000;
    const settled = (seq: number, outcome: "delivered" | "failed", at: number) => ({
      seq,
      outcome,
      attempts: 2,
      lastStatus: outcome === "delivered" ? 200 : 500,
      lastError: null,
      createdAt: at,
      settledAt: at,
      attemptLog: [[at, outcome === "delivered" ? 200 : 500, 5, null, null]],
    });
    await runInDurableObject(laneOf(env, made.id), (_, state) => {
      const { sql } = state.storage;
      state.storage.kv.put("endpointId", made.id);
      // Two blocks: one whose every entry settled before the log's reach, and a newer one.
      for (const entry of [settled(1, "delivered", old), settled(3, "failed", recent)])
        sql.exec(
          "INSERT INTO delivery_log (delivered, settled, last_at, settled_at, entries, settled_entries) VALUES (0, 1, " +
            "0, ?, '[]', ?)",
          entry.settledAt,
          JSON.stringify([entry]),
        );
      sql.exec(
        "INSERT INTO pending_deliveries (seq, due_at, created_at, updated_at) VALUES (2, ?, ?, ?)",
        now + 60_000,
        old,
        old,
      );
    });
    await runLaneOnce(made.id, { fetch: receiver().fetch, now: () => now });
    const left = await laneDeliveries(made.id);
    expect(left.map((row) => row.seq)).toEqual([2, 3]);
    expect(left[1]!.attempt_log).toEqual([[recent, 500, 5, null, null]]);
  });

  it("reads a run's recent settled entries from the blocks since, not back through first tries to an older one", async () => {
    const made = await endpoint({ url: "https://kept.example/" });
    const at = Date.now();
    const found = await runInDurableObject(laneOf(env, made.id), (_, state) => {
      const { sql } = state.storage;
      const refused = [at - 3 * 3_600_000, 503, 5, null, null] as [number, number, number, null, null];
      const failed = { seq: 1, outcome: "failed" as const, attempts: 1, lastStatus: 503, lastError: "503" };
      appendSettled(sql, [{ ...failed, createdAt: refused[0], settledAt: refused[0], attemptLog: [refused] }]);
      // 300 blocks of first tries since, the newest an hour old.
      for (let block = 0; block < 300; block++)
        sql.exec(
          "INSERT INTO delivery_log (after, through, delivered, settled, last_at, settled_at, entries, " +
            "settled_entries) VALUES (?1, ?1 + 1, 1, 0, ?2, ?3, '[]', '[]')",
          block + 1,
          at - 2 * 3_600_000 + block * 3_000,
          refused[0],
        );
      const counting = countStorage(state.storage);
      try {
        const recent = failedAttemptsSince(sql, at - 1_800_000, 3, new Set());
        const read = counting.rows().read;
        return { recent, read, older: failedAttemptsSince(sql, at - 4 * 3_600_000, 3, new Set()) };
      } finally {
        counting.restore();
      }
    });
    // The newest block, and the one the cursor steps to before the scan ends.
    expect(found).toEqual({ recent: 0, read: 2, older: 1 });
  });

  it("prunes again at once while a prune fills its batch, then not for PRUNE_GAP_MS", async () => {
    const made = await endpoint({ url: "https://kept.example/" });
    const now = Date.now();
    const old = now - DELIVERY_LOG_MS - 60_000;
    const blocks = () =>
      runInDurableObject(laneOf(env, made.id), (_, state) => {
        const { sql } = state.storage;
        return sql.exec<{ n: number }>("SELECT count(*) AS n FROM delivery_log WHERE settled > 0").one().n;
      });
    const addOld = (count: number) =>
      runInDurableObject(laneOf(env, made.id), (_, state) => {
        state.storage.kv.put("endpointId", made.id);
        for (let i = 0; i < count; i++)
          state.storage.sql.exec(
            "INSERT INTO delivery_log (through, delivered, settled, last_at, settled_at, entries, settled_entries) " +
              "VALUES ((SELECT max(through) FROM delivery_log), 0, 1, 0, ?, '[]', '[]')",
            old,
          );
      });
    await addOld(25);
    const prunes = { dueAt: 0 };
    const run = (at: number) => runLaneOnce(made.id, { fetch: receiver().fetch, now: () => at, prunes });
    await run(now);
    // A full batch of 20, and the newest (with the cursor) emptied: the next run prunes too.
    expect([await blocks(), prunes.dueAt]).toEqual([4, now]);
    await run(now);
    expect([await blocks(), prunes.dueAt]).toEqual([0, now + PRUNE_GAP_MS]);
    await addOld(1);
    await run(now + PRUNE_GAP_MS - 1);
    expect(await blocks()).toBe(1);
    await run(now + PRUNE_GAP_MS);
    expect(await blocks()).toBe(0);
  });

  it("prunes the log's blocks again at once while a prune fills its batch; the newest, with the cursor, is kept", async () => {
    const made = await endpoint({ url: "https://kept.example/" });
    const now = Date.now();
    const old = now - DELIVERY_LOG_MS - 60_000;
    const blocks = () =>
      runInDurableObject(laneOf(env, made.id), (_, state) =>
        state.storage.sql.exec<{ after: number }>("SELECT after FROM delivery_log ORDER BY after").toArray(),
      );
    await runInDurableObject(laneOf(env, made.id), (_, state) => {
      state.storage.kv.put("endpointId", made.id);
      for (let block = 0; block < 26; block++)
        state.storage.sql.exec(
          "INSERT INTO delivery_log (after, through, delivered, settled, last_at, settled_at, entries, settled_entries) " +
            "VALUES (?, ?, 1, 0, ?, 0, '[]', '[]')",
          block,
          block + 1,
          old,
        );
    });
    const prunes = { dueAt: 0 };
    const run = () => runLaneOnce(made.id, { fetch: receiver().fetch, now: () => now, prunes });
    await run();
    expect([(await blocks()).length, prunes.dueAt]).toEqual([6, now]);
    await run();
    expect([await blocks(), prunes.dueAt]).toEqual([[{ after: 25 }], now + PRUNE_GAP_MS]);
  });
});

describe("Standard Webhooks signatures", () => {
  it("reproduce the specification's test vector", async () => {
    expect(
      await signWebhook(
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });
});
