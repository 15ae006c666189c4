import { env } from "cloudflare:workers";
import {
  createExecutionContext,
  createScheduledController,
  runInDurableObject,
  waitOnExecutionContext,
} from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import worker from "../../../src/app/worker";
import type { WebhookDispatcher } from "../../../src/webhook-delivery/dispatcher-object";
import { FAILED_PASS_RETRY_MAX_MS, failedPassRetryMs } from "../../../src/webhook-delivery/dispatch-schedule";
import { DISPATCHER_NAME } from "../../../src/webhook-delivery/dispatcher-calls";
import {
  BEHIND_RETRY_MAX_MS,
  behindRetryMs,
  dispatchEvents,
  type HandToLane,
} from "../../../src/webhook-delivery/dispatch-pass";
import { laneOf } from "../../../src/webhook-delivery/lane-calls";
import { failedRunRetryMs, type WebhookLane } from "../../../src/webhook-delivery/lane-object";
import { outageD1 } from "../../support/faults";
import { api, apiWith } from "../../support/request";
import { seedOrders } from "../../support/seed";
import {
  dispatchQuietly,
  laneDeliveries,
  makeEndpoint,
  pendingDeliveries,
  quietLanes,
  receivers,
  runLaneOnce,
  webhookOwnerOfEachTest,
} from "../../support/webhook-fixtures";

/**
 * Webhook delivery through outages (docs/design/order-events.md#faults): D1
 * failing for a stretch of a lane's runs and of the dispatcher's passes, a
 * lane that cannot be reached, a dispatcher whose alarm is lost. "None
 * lost" is checked by delivering everything after the fault; "none sent
 * twice" by counting the POSTs.
 */
const owner = webhookOwnerOfEachTest();
const dispatchMark = async () =>
  String(await env.DB.prepare("SELECT mark FROM webhook_dispatch").first<number>("mark"));

/**
 * Runs an object's alarm with the bindings given (a failing D1), as the
 * platform would; answers when it set its next one, and takes that one back,
 * so the platform runs nothing of its own between the test's.
 */
const alarmWith = <T extends WebhookDispatcher | WebhookLane>(stub: DurableObjectStub<T>, bindings: Env) =>
  runInDurableObject(stub, async (instance: T, state) => {
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

describe("a D1 outage during a lane's run", () => {
  it("sends nothing and loses nothing while D1 is down, then delivers every delivery once", async () => {
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [1, 2, 3]);
    const outage = outageD1();
    const { posts, fetch } = receivers();
    outage.setDown(true);
    for (let run = 0; run < 5; run++)
      await expect(runLaneOnce(endpointId, { db: outage.db, fetch })).rejects.toThrow(/Network connection lost/);
    expect(posts).toEqual([]);
    expect((await laneDeliveries(endpointId)).map((row) => [row.outcome, row.attempts, row.schedule_step])).toEqual(
      seqs.map(() => ["pending", 0, 0]),
    );
    outage.setDown(false);
    await runLaneOnce(endpointId, { db: outage.db, fetch });
    expect(posts.map((post) => post.webhookId).sort()).toEqual(seqs.map((seq) => `evt_${seq}`).sort());
    expect((await laneDeliveries(endpointId)).every((row) => row.outcome === "delivered" && row.attempts === 1)).toBe(
      true,
    );
  });

  it("never lets the lane's alarm die: a failed run is tried again with backoff, then delivers", async () => {
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [4]);
    const lane = laneOf(env, endpointId);
    const outage = outageD1();
    outage.setDown(true);
    for (let failed = 1; failed <= 6; failed++) {
      const from = Date.now();
      const at = await alarmWith(lane, { ...env, DB: outage.db });
      expect(at!).toBeGreaterThanOrEqual(from + failedRunRetryMs(failed));
      expect(at!).toBeLessThanOrEqual(Date.now() + failedRunRetryMs(failed));
    }
    const fetched = vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("ok"));
    expect(await alarmWith(lane, env)).toBeNull();
    expect(fetched).toHaveBeenCalledTimes(1);
    expect((await laneDeliveries(endpointId)).map((row) => [row.seq, row.outcome])).toEqual([[seqs[0], "delivered"]]);
    expect(await runInDurableObject(lane, (_, state) => state.storage.kv.get("failedRuns"))).toBeUndefined();
  });
});

describe("an endpoint's health, as operators list it", () => {
  it("is failing from its lane's second run that delivered nothing, since the first, and delivering again, with when, once a delivery succeeds", async () => {
    const { endpointId } = await pendingDeliveries(owner.key, [21]);
    const lane = laneOf(env, endpointId);
    const listed = async () =>
      (
        await (
          await api(`/admin/webhook-endpoints?budget=${owner.record.id}`, {
            key: null,
            headers: { Authorization: "Bearer operator-token-for-tests" },
          })
        ).json<{ data: { id: string; failingSince: string | null; lastDeliveredAt: string | null }[] }>()
      ).data.find(({ id }) => id === endpointId)!;
    expect(await listed()).toMatchObject({ failingSince: null, lastDeliveredAt: null });
    const retryNow = () =>
      runInDurableObject(lane, (_, state) =>
        state.storage.sql.exec("UPDATE pending_deliveries SET due_at = ?", Date.now()),
      );
    const refusing = vi
      .spyOn(globalThis, "fetch")
      .mockImplementation(async () => new Response("down", { status: 503 }));
    const before = Date.now();
    await alarmWith(lane, env);
    expect(refusing).toHaveBeenCalledTimes(1);
    // One refusal is no failing period yet: its retry may be taken.
    expect(await listed()).toMatchObject({ failingSince: null, lastDeliveredAt: null });
    await retryNow();
    const second = Date.now();
    await alarmWith(lane, env);
    expect(refusing).toHaveBeenCalledTimes(2);
    const failing = await listed();
    expect(Date.parse(failing.failingSince!)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(failing.failingSince!)).toBeLessThanOrEqual(second);
    expect(failing.lastDeliveredAt).toBeNull();
    // Its retry made due now: the receiver is back.
    await retryNow();
    vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("ok"));
    await alarmWith(lane, env);
    const recovered = await listed();
    expect(recovered.failingSince).toBeNull();
    expect(Date.parse(recovered.lastDeliveredAt!)).toBeGreaterThanOrEqual(Date.parse(failing.failingSince!));
  });
});

describe("the dispatcher in an outage", () => {
  const dispatcher = (name: string) => env.WEBHOOK_DISPATCHER.getByName(name);

  it("never lets its alarm die: a failed pass is tried again with backoff, mark unmoved, and hands the events over once D1 is back", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    const stub = dispatcher("outage-test");
    await alarmWith(stub, env);
    const markBefore = await dispatchMark();
    await seedOrders([{ id: 18 }]);

    const outage = outageD1();
    outage.setDown(true);
    for (let failed = 1; failed <= 8; failed++) {
      // The pass's own clock lies between these two: its next alarm is the backoff after it, however busy the machine.
      const from = Date.now();
      const at = await alarmWith(stub, { ...env, DB: outage.db });
      const to = Date.now();
      expect(at!).toBeGreaterThanOrEqual(from + failedPassRetryMs(failed));
      expect(at!).toBeLessThanOrEqual(to + failedPassRetryMs(failed));
    }
    // 1, 2, 4, 8 s, then never more than FAILED_PASS_RETRY_MAX_MS: however long the outage, a pass comes within that of
    // its end.
    expect([1, 2, 3, 4, 5, 8, 100].map(failedPassRetryMs)).toEqual([
      1000,
      2000,
      4000,
      8000,
      FAILED_PASS_RETRY_MAX_MS,
      FAILED_PASS_RETRY_MAX_MS,
      FAILED_PASS_RETRY_MAX_MS,
    ]);
    expect(await dispatchMark()).toBe(markBefore);

    vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("ok"));
    expect(await alarmWith(stub, env)).not.toBeNull();
    expect(await dispatchMark()).not.toBe(markBefore);
    await vi.waitFor(
      async () => expect((await laneDeliveries(made.id)).map((row) => row.outcome)).toEqual(["delivered"]),
      { timeout: 10_000 },
    );
    expect(await runInDurableObject(stub, (_, state) => state.storage.kv.get("failedPasses"))).toBeUndefined();
  });

  it("moves on past a lane it could not reach; that lane catches up alone, in order, once its retry is due, and nothing is sent twice", async () => {
    const reached = await makeEndpoint(owner.key, { url: "https://reached.example/hooks" });
    const unreachable = await makeEndpoint(owner.key, { url: "https://unreachable.example/hooks" });
    const before = Number(await dispatchMark());
    await seedOrders([{ id: 30 }, { id: 31 }]);
    await env.DB.prepare("UPDATE orders SET status = 'cancelled' WHERE id = 31").run();
    const now = Date.now();
    const handed: { id: string; seqs: string[] }[] = [];
    let reachable = false;
    const lanes: HandToLane = async (id, seqs) => {
      handed.push({ id, seqs });
      if (id === unreachable.id && !reachable) throw new Error("the lane's object was restarting");
      return quietLanes(id, seqs);
    };
    // The mark moves past all three: the reached endpoint is not held back by the other's lane.
    expect(await dispatchQuietly(lanes, { now })).toMatchObject({
      mark: String(before + 3),
      failedLanes: 1,
      failedEndpoints: [unreachable.id],
      behind: 1,
    });
    expect(await laneDeliveries(reached.id)).toHaveLength(3);
    const health = await (
      await api("/admin/pipeline", { key: null, headers: { Authorization: "Bearer operator-token-for-tests" } })
    ).json<{ dispatcher: { lanesBehind: number }; warnings: string[] }>();
    expect(health.dispatcher.lanesBehind).toBe(1);
    expect(health.warnings.join(" ")).toContain("behind the dispatcher's mark");

    // A new event, before the lane's retry is due: the reached lane has it, the one behind is not called (nor handed it
    // out of order).
    await seedOrders([{ id: 32 }]);
    handed.length = 0;
    expect(await dispatchQuietly(lanes, { now: now + 500 })).toMatchObject({
      mark: String(before + 4),
      failedLanes: 0,
      behind: 1,
    });
    expect(handed.map((call) => call.id)).toEqual([reached.id]);

    // Its retry is due and its lane answers: it is handed all four, oldest first, in one call, and is at the mark
    // again.
    reachable = true;
    handed.length = 0;
    expect(await dispatchQuietly(lanes, { now: now + 1_000 })).toMatchObject({
      mark: String(before + 4),
      behind: 0,
      enqueued: 4,
    });
    expect(handed).toEqual([{ id: unreachable.id, seqs: [1, 2, 3, 4].map((n) => String(before + n)) }]);

    await seedOrders([{ id: 33 }]);
    handed.length = 0;
    expect(await dispatchQuietly(lanes, { now: now + 1_500 })).toMatchObject({
      mark: String(before + 5),
      behind: 0,
      enqueued: 2,
    });
    expect(handed.map((call) => call.id).sort()).toEqual([reached.id, unreachable.id].sort());

    const { posts, fetch } = receivers();
    await runLaneOnce(reached.id, { fetch });
    await runLaneOnce(unreachable.id, { fetch });
    for (const host of ["https://reached", "https://unreachable"]) {
      expect(posts.filter((post) => post.url.startsWith(host)).map((post) => post.webhookId)).toEqual(
        [1, 2, 3, 4, 5].map((n) => `evt_${before + n}`),
      );
    }
  });

  it("tries a lane that keeps failing less and less often, and pages one far behind through its events", async () => {
    const behind = await makeEndpoint(owner.key, { url: "https://behind.example/hooks" });
    const before = Number(await dispatchMark());
    const failing: HandToLane = async () => {
      throw new Error("the lane's storage is full");
    };
    await seedOrders([{ id: 50 }]);
    let now = Date.now();
    await dispatchQuietly(failing, { now });
    const tries: number[] = [];
    for (let failures = 1; failures <= 12; failures++) {
      const { behind_retry_at: retryAt } = (await env.DB.prepare(
        "SELECT behind_retry_at FROM webhook_endpoints WHERE id = ?1",
      )
        .bind(behind.id)
        .first<{ behind_retry_at: number }>())!;
      tries.push(retryAt - now);
      // Not before it is due: a pass then leaves it alone.
      expect(await dispatchQuietly(failing, { now: retryAt - 1 })).toMatchObject({ failedLanes: 0, behind: 1 });
      now = retryAt;
      expect(await dispatchQuietly(failing, { now })).toMatchObject({ failedLanes: 1, behind: 1 });
    }
    expect(tries).toEqual([1, 2, 4, 8, 16, 32, 60, 60, 60, 60, 60, 60].map((s) => s * 1_000));
    expect(tries.map((_, failures) => behindRetryMs(failures + 1))).toEqual(tries);

    // 250 events behind: handed 100 a pass, in order, each pass followed by another at once (`more`).
    await seedOrders(Array.from({ length: 249 }, (_, i) => ({ id: 100 + i })));
    const handed: string[][] = [];
    const results = [];
    for (let pass = 0; pass < 3; pass++) {
      results.push(
        await dispatchQuietly(async (id, seqs) => (handed.push(seqs), quietLanes(id, seqs)), {
          now: now + BEHIND_RETRY_MAX_MS,
        }),
      );
    }
    expect(results.map((result) => [result.more, result.behind])).toEqual([
      [true, 1],
      [true, 1],
      [false, 0],
    ]);
    expect(handed.flat()).toEqual(Array.from({ length: 250 }, (_, i) => String(before + 1 + i)));
    expect(await laneDeliveries(behind.id)).toHaveLength(250);
  });

  it("counts a lane that does not answer as failed, within its time, and hands the others their events", async () => {
    const hung = await makeEndpoint(owner.key, { url: "https://hung.example/hooks" });
    const healthy = await makeEndpoint(owner.key, { url: "https://healthy.example/hooks" });
    const before = await dispatchMark();
    await seedOrders([{ id: 41 }]);
    const handed: string[] = [];
    // The healthy lane answers at once (a stand-in: a real one could take longer than the 50 ms on a busy machine).
    const lanes: HandToLane = async (id, seqs) =>
      id === hung.id ? new Promise<number>(() => {}) : (handed.push(id), seqs.length);
    const pass = await dispatchEvents(env.DB, lanes, { laneTimeoutMs: 50 });
    expect(pass).toMatchObject({
      failedLanes: 1,
      failedEndpoints: [hung.id],
      mark: String(Number(before) + 1),
      behind: 1,
      enqueued: 1,
    });
    expect(handed).toEqual([healthy.id]);
  });

  it("is woken by the cron every minute, whatever happened to its alarm (one that threw past the platform's retries)", async () => {
    await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    const stub = dispatcher(DISPATCHER_NAME);
    await runInDurableObject(stub, (_, state) => state.storage.deleteAlarm());
    expect(await runInDurableObject(stub, (_, state) => state.storage.getAlarm())).toBeNull();
    const ctx = createExecutionContext();
    worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "* * * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
    // The wake set an alarm at once; it runs, and the dispatcher, watching an endpoint, sets its next.
    await expect
      .poll(() => runInDurableObject(stub, (_, state) => state.storage.kv.get("watching")), { timeout: 10_000 })
      .toBe(true);
    // Stopped: a dispatcher left watching would hand the next tests' lanes their events behind their backs.
    await runInDurableObject(stub, (_, state) => state.storage.deleteAlarm());
  });

  it("is woken for a new endpoint even when the first call to it fails", async () => {
    let calls = 0;
    const wakes: number[] = [];
    const stand_in = {
      getByName: () => ({
        wake: async () => {
          wakes.push(++calls);
          if (calls === 1) throw new Error("the object was restarting");
        },
      }),
    };
    const response = await apiWith(
      { ...env, WEBHOOK_DISPATCHER: stand_in as unknown as Env["WEBHOOK_DISPATCHER"] },
      "/v2/webhook-endpoints",
      {
        method: "POST",
        key: owner.key,
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ url: "https://receiver.example/hooks" }),
      },
    );
    expect(response.status).toBe(201);
    await expect.poll(() => wakes, { timeout: 10_000 }).toEqual([1, 2]);
  });

  it("sets an alarm on a nudge when a watching dispatcher has lost its own", async () => {
    await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    const stub = dispatcher("lost-alarm-test");
    await alarmWith(stub, env);
    expect(await runInDurableObject(stub, (_, state) => state.storage.getAlarm())).toBeNull();
    await stub.nudge();
    // The nudge's alarm runs at once; while it runs none is set, and it sets the next (the dispatcher watches).
    await expect
      .poll(() => runInDurableObject(stub, (_, state) => state.storage.getAlarm()), { timeout: 10_000 })
      .not.toBeNull();
    // Stopped: a dispatcher left watching would hand the next tests' lanes their events behind their backs.
    await runInDurableObject(stub, (_, state) => state.storage.deleteAlarm());
  });
});
