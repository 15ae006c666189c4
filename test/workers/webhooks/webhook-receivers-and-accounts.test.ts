import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { accountLiveness, type AccountLiveness } from "../../../src/keys/live-account";
import { TtlCache } from "../../../src/lib/ttl-cache";
import { attemptDelivery } from "../../../src/webhook-delivery/delivery-attempt";
import { laneOf } from "../../../src/webhook-delivery/lane-calls";
import { dispatchEvents } from "../../../src/webhook-delivery/dispatch-pass";
import { deliveryOf, type Settle } from "../../../src/webhook-delivery/lane-deliveries";
import { newestLogged } from "../../../src/webhook-delivery/lane-log";
import { WATCHDOG_MS, type WebhookLane } from "../../../src/webhook-delivery/lane-object";
import { laneEndpoint } from "../../../src/webhook-delivery/endpoint-table";
import { nextDelaySeconds, retryAfterSeconds } from "../../../src/webhook-delivery/retry-schedule";
import { signersOf } from "../../../src/webhook-delivery/webhook-signature";
import { seedOrders } from "../../support/seed";
import { interceptD1 } from "../../support/faults";
import { storeTestKey, type TestKey } from "../../support/test-keys";
import { api } from "../../support/request";
import {
  dispatchQuietly,
  laneDeliveries,
  laneDelivery,
  makeEndpoint,
  pendingDeliveries,
  receivers,
  runLaneOnce,
  silentReceiver,
  webhookOwnerOfEachTest,
  settleNow,
} from "../../support/webhook-fixtures";

/**
 * Webhook delivery against what receivers and accounts do (docs/design/order-events.md#lanes):
 * what cannot be delivered, a receiver that hangs beside a healthy one, an
 * owner's rate limit, a receiver that says 410 or asks for time, an account
 * whose keys are revoked or expired.
 */
const owner = webhookOwnerOfEachTest();

/** A row delivered by something else (a manual retry, another run) at `at`. */
const deliveredMeanwhile = (sql: SqlStorage, seq: number, at: number) =>
  settleNow(
    sql,
    [
      {
        seq,
        outcome: "delivered",
        attempt: [at, 200, 5, null, null],
        error: null,
        updatedAt: deliveryOf(sql, seq)!.updated_at,
      },
    ],
    at,
  );

describe("what cannot be delivered", () => {
  it("fails a delivery whose secret cannot be opened (it never could), rather than retrying it for ever", async () => {
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [21]);
    const { posts, fetch } = receivers();
    await runLaneOnce(endpointId, { fetch, sealingKey: "another-sealing-key" });
    expect(posts).toEqual([]);
    expect(await laneDelivery(endpointId, seqs[0]!)).toMatchObject({
      outcome: "failed",
      last_error: "the endpoint's secret cannot be opened (WEBHOOK_SECRETS_KEY changed?)",
    });
  });

  it("fails the pending deliveries of an endpoint disabled meanwhile, without a POST", async () => {
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [23, 24]);
    await env.DB.prepare("UPDATE webhook_endpoints SET status = 'disabled', disabled_by = 'operator' WHERE id = ?1")
      .bind(endpointId)
      .run();
    const { posts, fetch } = receivers();
    await runLaneOnce(endpointId, { fetch });
    expect(posts).toEqual([]);
    expect((await laneDeliveries(endpointId)).map((row) => [row.seq, row.outcome, row.last_error])).toEqual(
      seqs.map((seq) => [seq, "failed", "the endpoint is disabled"]),
    );
  });
});

describe("each endpoint in a lane of its own", () => {
  /**
   * A receiver that answers nothing until the test lets it: it waits in the
   * lane's own context (a timer), so the test only flips a flag, never
   * settles a promise made in another object's context.
   */
  function heldReceiver(answer: (signal: AbortSignal | undefined) => Promise<Response> | Response) {
    const held = { waiting: 0, released: 0 };
    const { fetch, posts } = receivers(async (_url, signal) => {
      const turn = held.waiting++;
      while (held.released <= turn) await scheduler.wait(5);
      return answer(signal);
    });
    return { held, fetch, posts };
  }

  it("delivers to a healthy endpoint while another's receiver hangs, in no more time than its own receiver takes", async () => {
    const slowKey = await storeTestKey({ scopes: ["orders:read", "webhooks:manage"] });
    const slow = await makeEndpoint(slowKey.key, { url: "https://slow.example/hooks" });
    const healthy = await makeEndpoint(owner.key, { url: "https://healthy.example/hooks" });
    await seedOrders([{ id: 8 }, { id: 9 }]);
    await dispatchQuietly();
    // The slow receiver never answers; held, it does not even fail until the test lets the POST's own timeout end it.
    const hanging = heldReceiver((signal) => silentReceiver("", signal));
    const slowRun = runLaneOnce(slow.id, { fetch: hanging.fetch, timeoutMs: 100 });
    await expect.poll(() => hanging.held.waiting, { timeout: 10_000 }).toBe(2);
    // Both of the slow endpoint's deliveries hang; the healthy lane runs and finishes meanwhile.
    const { fetch, posts } = receivers(() => new Response(null, { status: 204 }));
    expect(await runLaneOnce(healthy.id, { fetch })).toMatchObject({ delivered: 2, attempted: 2 });
    expect((await laneDeliveries(healthy.id)).map((row) => row.outcome)).toEqual(["delivered", "delivered"]);
    expect(posts).toHaveLength(2);
    expect((await laneDeliveries(slow.id)).map((row) => row.attempts)).toEqual([0, 0]);
    hanging.held.released = 2;
    await slowRun;
    expect((await laneDeliveries(slow.id)).map((row) => [row.outcome, row.attempts, row.last_error])).toEqual([
      ["pending", 1, "no answer within 0.1 s"],
      ["pending", 1, "no answer within 0.1 s"],
    ]);
  });

  it("is handed its events by a pass that waits for none of its POSTs: the pass and a healthy lane go on while it hangs", async () => {
    const slowKey = await storeTestKey({ scopes: ["orders:read", "webhooks:manage"] });
    const slow = await makeEndpoint(slowKey.key, { url: "https://slow.example/hooks" });
    const healthy = await makeEndpoint(owner.key, { url: "https://healthy.example/hooks" });
    await seedOrders([{ id: 18 }]);
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const { fetch, posts } = receivers(async (url) => {
      if (url.startsWith("https://slow.example")) await released;
      return new Response(null, { status: 204 });
    });
    const fetched = globalThis.fetch;
    globalThis.fetch = fetch;
    const lanes = [slow.id, healthy.id].map((id) => laneOf(env, id));
    try {
      const handToLane = (id: string, seqs: string[]) => laneOf(env, id).enqueue(id, seqs);
      expect(await dispatchEvents(env.DB, handToLane, { laneTimeoutMs: 1_000 })).toMatchObject({
        failedLanes: 0,
        enqueued: 2,
      });
      await runInDurableObject(lanes[1]!, (lane: WebhookLane) => lane.running);
      expect((await laneDeliveries(healthy.id)).map((row) => row.outcome)).toEqual(["delivered"]);
      await expect.poll(() => posts.some((post) => post.url.startsWith("https://slow.example"))).toBe(true);
      expect((await laneDeliveries(slow.id)).map((row) => row.outcome)).toEqual(["pending"]);
    } finally {
      release();
      for (const lane of lanes)
        await runInDurableObject(lane, async (object: WebhookLane, state) => {
          await object.running;
          await state.storage.deleteAlarm();
        });
      globalThis.fetch = fetched;
    }
  });

  it("keeps at most six POSTs of one endpoint in flight; the rest wait their turn", async () => {
    const { endpointId } = await pendingDeliveries(owner.key, [31, 32, 33, 34, 35, 36, 37, 38]);
    const { held, fetch, posts } = heldReceiver(() => new Response("ok"));
    const run = runLaneOnce(endpointId, { fetch });
    await expect.poll(() => held.waiting, { timeout: 10_000 }).toBe(6);
    held.released = 1;
    await expect.poll(() => held.waiting, { timeout: 10_000 }).toBe(7);
    expect(posts).toHaveLength(7);
    held.released = 8;
    expect(await run).toMatchObject({ delivered: 8, attempted: 8, next: null });
  });

  it("ends a run D1 failed only once the POSTs it started are recorded: the next run sends none of them again", async () => {
    const { endpointId } = await pendingDeliveries(
      owner.key,
      Array.from({ length: 51 }, (_, index) => 200 + index),
    );
    // The last five of the first page are held; the second page's events cannot be read (D1 down at that moment).
    let answered = 0;
    const release = { open: false };
    const { fetch, posts } = receivers(async () => {
      if (++answered > 45 && answered <= 50) while (!release.open) await scheduler.wait(5);
      return new Response("ok");
    });
    let eventReads = 0;
    const failing = interceptD1({
      prepare: (statement, query) => {
        if (query.includes("FROM order_events WHERE seq > ?1 AND") && ++eventReads === 2)
          throw new Error("D1_ERROR: Network connection lost.");
        return statement;
      },
    });
    let settled = false;
    const run = runLaneOnce(endpointId, { fetch, db: failing }).finally(() => void (settled = true));
    await expect.poll(() => eventReads, { timeout: 10_000 }).toBe(2);
    expect(settled).toBe(false);
    release.open = true;
    await expect(run).rejects.toThrow(/Network connection lost/);
    expect((await laneDeliveries(endpointId)).filter((row) => row.outcome === "delivered")).toHaveLength(50);
    await runLaneOnce(endpointId, { fetch });
    expect(posts).toHaveLength(51);
    expect(new Set(posts.map((post) => post.webhookId)).size).toBe(51);
  });

  it("logs as delivered what a run sent before its endpoint was disabled mid-run, and fails only the rest", async () => {
    const { endpointId, seqs } = await pendingDeliveries(
      owner.key,
      Array.from({ length: 120 }, (_, index) => 5_000 + index),
    );
    // The 40th POST disables it; the next five answer only once the run has read the endpoint again, so that the run
    // learns of the disabling while they are under way, before any of them is flushed.
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let endpointReads = 0;
    const db = interceptD1({
      prepare: (statement, query) => {
        if (query.includes("FROM webhook_endpoints WHERE id = ?1") && ++endpointReads === 2) release();
        return statement;
      },
    });
    const { fetch, posts } = receivers(async () => {
      const turn = posts.length;
      if (turn === 40)
        await env.DB.prepare("UPDATE webhook_endpoints SET status = 'disabled', disabled_by = 'owner' WHERE id = ?1")
          .bind(endpointId)
          .run();
      if (turn > 40 && turn <= 45) await gate;
      return new Response(null, { status: 204 });
    });
    await runLaneOnce(endpointId, { fetch, db });
    // The next run fails what is left, from the cursor the first one flushed.
    await runLaneOnce(endpointId, { fetch });
    const sent = new Set(posts.map((post) => Number(post.webhookId.slice("evt_".length))));
    expect(sent.size).toBeGreaterThanOrEqual(40);
    expect(sent.size).toBeLessThan(seqs.length);
    const rows = await laneDeliveries(endpointId);
    expect(rows.map((row) => row.seq)).toEqual(seqs);
    for (const row of rows) expect(row.outcome, `evt_${row.seq}`).toBe(sent.has(row.seq) ? "delivered" : "failed");
  });

  it("keeps as delivered the retried rows a run sent before its endpoint was disabled mid-run, their settling not flushed yet", async () => {
    const { endpointId, seqs } = await pendingDeliveries(
      owner.key,
      Array.from({ length: 30 }, (_, index) => 5_200 + index),
    );
    const clock = Date.now();
    await runLaneOnce(endpointId, {
      fetch: receivers(() => new Response(null, { status: 503 })).fetch,
      now: () => clock,
    });
    // Due again: the first retry's POST disables the endpoint; the run reads it again once the page is started.
    const { fetch, posts } = receivers(async () => {
      if (posts.length === 1)
        await env.DB.prepare("UPDATE webhook_endpoints SET status = 'disabled', disabled_by = 'owner' WHERE id = ?1")
          .bind(endpointId)
          .run();
      return new Response(null, { status: 204 });
    });
    await runLaneOnce(endpointId, { fetch, now: () => clock + 60_000 });
    await runLaneOnce(endpointId, { fetch, now: () => clock + 60_000 });
    const sent = new Set(posts.map((post) => Number(post.webhookId.slice("evt_".length))));
    expect(sent.size).toBeGreaterThan(1);
    const rows = await laneDeliveries(endpointId);
    expect(rows.map((row) => row.seq)).toEqual(seqs);
    for (const row of rows) expect(row.outcome, `evt_${row.seq}`).toBe(sent.has(row.seq) ? "delivered" : "failed");
  });

  it("fails as a range only the events its lane never tried once its endpoint is disabled: the refused keep their own", async () => {
    const { endpointId } = await pendingDeliveries(owner.key, [5_300, 5_301, 5_302]);
    const clock = Date.now();
    // Refused in a run of their own: their rows key them, and the cursor stays before them.
    await runLaneOnce(endpointId, {
      fetch: receivers(() => new Response(null, { status: 503 })).fetch,
      now: () => clock,
    });
    await seedOrders([{ id: 5_303 }, { id: 5_304 }]);
    while ((await dispatchQuietly()).more);
    await env.DB.prepare("UPDATE webhook_endpoints SET status = 'disabled', disabled_by = 'owner' WHERE id = ?1")
      .bind(endpointId)
      .run();
    await runLaneOnce(endpointId, { fetch: receivers().fetch, now: () => clock + 100 });
    expect((await laneDeliveries(endpointId)).map((row) => [row.outcome, row.attempts, row.last_error])).toEqual([
      ...Array(3).fill(["failed", 1, "the endpoint is disabled"]),
      ...Array(2).fill(["failed", 0, "the endpoint is disabled"]),
    ]);
  });

  it("never sends again a row failed mid-run for want of a live key, past a cursor its refusal left where it stood", async () => {
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [5_400]);
    const t0 = Date.now();
    const refusing = receivers(() => new Response(null, { status: 503 })).fetch;
    await runLaneOnce(endpointId, { fetch: refusing, now: () => t0 });
    await seedOrders([{ id: 5_401 }]);
    while ((await dispatchQuietly()).more);
    const [first, second] = [seqs[0]!, seqs[0]! + 1];
    // The second refused in a run of its own, due later than the first: both rows, the cursor before both.
    await runLaneOnce(endpointId, { fetch: refusing, now: () => t0 + 500 });
    // The first's retry goes out; then the account has no live key, and the second fails.
    let asked = 0;
    await runLaneOnce(endpointId, {
      fetch: receivers().fetch,
      now: () => t0 + 1_000,
      accountLiveness: async () => (++asked === 1 ? "live" : "dead"),
    });
    const { fetch, posts } = receivers();
    await runLaneOnce(endpointId, { fetch, now: () => t0 + 60_000, accountLiveness: async () => "live" });
    expect(posts).toEqual([]);
    expect((await laneDeliveries(endpointId)).map((row) => [row.seq, row.outcome, row.attempts])).toEqual([
      [first, "delivered", 2],
      [second, "failed", 1],
    ]);
  });

  it("sends no delivery settled after its page was read", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://paced.example/hooks", rateLimit: 1 });
    await seedOrders([61, 62, 63].map((id) => ({ id })));
    await dispatchQuietly();
    const [first, second, third] = (await laneDeliveries(made.id)).map((row) => row.seq);
    // Each refused once: each has a row, due again within seconds.
    let clock = Date.now();
    await runLaneOnce(made.id, {
      fetch: receivers(() => new Response(null, { status: 500 })).fetch,
      now: () => clock,
      sleep: async (ms) => void (clock += ms),
    });
    clock += 60_000;
    const { fetch, posts } = receivers();
    await runLaneOnce(made.id, (state) => ({
      fetch,
      now: () => clock,
      accountLiveness: async () => "live",
      // While the lane waits its turn, a manual retry delivers the second and another run the third.
      sleep: async (ms) => {
        clock += ms;
        for (const seq of [second!, third!]) deliveredMeanwhile(state.storage.sql, seq, clock);
      },
    }));
    expect(posts.map((post) => post.webhookId)).toEqual([`evt_${first}`]);
  });

  it("sends none of a page's events once the lane is wiped (its endpoint deleted) after the page was read", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://paced.example/hooks", rateLimit: 1 });
    await seedOrders([67, 68, 69].map((id) => ({ id })));
    await dispatchQuietly();
    const [first] = (await laneDeliveries(made.id)).map((row) => row.seq);
    const { fetch, posts } = receivers();
    let clock = Date.now();
    await runLaneOnce(made.id, (_, lane) => ({
      fetch,
      now: () => clock,
      accountLiveness: async () => "live",
      sleep: async (ms) => {
        clock += ms;
        await lane.wipe();
      },
    }));
    expect(posts.map((post) => post.webhookId)).toEqual([`evt_${first}`]);
  });

  it("arms its watchdog when woken, then sends what it was woken for; woken again for it, owes nothing", async () => {
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [71]);
    const lane = laneOf(env, endpointId);
    const posted = vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("ok"));
    const before = Date.now();
    expect(await lane.enqueue(endpointId, seqs.map(String))).toBe(1);
    const alarm = await runInDurableObject(lane, (_, state) => state.storage.getAlarm());
    expect(alarm).toBeGreaterThanOrEqual(before + WATCHDOG_MS);
    expect(alarm).toBeLessThanOrEqual(Date.now() + WATCHDOG_MS);
    await runInDurableObject(lane, (instance: WebhookLane) => instance.running);
    expect(posted).toHaveBeenCalledTimes(1);
    expect(await laneDelivery(endpointId, seqs[0]!)).toMatchObject({ outcome: "delivered" });
    expect(await lane.enqueue(endpointId, seqs.map(String))).toBe(0);
    await runInDurableObject(lane, (instance: WebhookLane) => instance.running);
    expect(posted).toHaveBeenCalledTimes(1);
    await runInDurableObject(lane, (_, state) => state.storage.deleteAlarm());
  });

  it("paces an endpoint with a rateLimit: starts spaced by its rate, every delivery made, none dropped", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://paced.example/hooks", rateLimit: 2 });
    await seedOrders([41, 42, 43, 44, 45].map((id) => ({ id })));
    await dispatchQuietly();
    let clock = Date.now();
    const { fetch } = receivers(() => new Response("ok"));
    const result = await runLaneOnce(made.id, { fetch, now: () => clock, sleep: async (ms) => void (clock += ms) });
    expect(result).toMatchObject({ delivered: 5, attempted: 5, next: null });
    // When each attempt started, as the lane logs it.
    const started = (await runInDurableObject(laneOf(env, made.id), (_, state) => newestLogged(state.storage.sql, 10)))
      .map(([, at]) => at)
      .reverse();
    const gaps = started.slice(1).map((at, index) => at - started[index]!);
    expect(gaps).toEqual([500, 500, 500, 500]);
    expect((await laneEndpoint(env.DB, made.id))?.rate_limit).toBe(2);
  });
});

describe("what the receiver asks for", () => {
  it("disables the endpoint at once on 410 Gone", async () => {
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [10]);
    const { fetch } = receivers(() => new Response("gone", { status: 410 }));
    await runLaneOnce(endpointId, { fetch });
    expect(await laneDelivery(endpointId, seqs[0]!)).toMatchObject({ outcome: "failed", last_status: 410 });
    expect(
      await env.DB.prepare("SELECT status, disabled_reason FROM webhook_endpoints WHERE id = ?1")
        .bind(endpointId)
        .first(),
    ).toEqual({
      status: "disabled",
      disabled_reason: "the receiver answered 410 Gone",
    });
  });

  it("never fails a delivery that was delivered meanwhile, whatever a late answer says (410 included)", async () => {
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [15]);
    const endpoint = (await laneEndpoint(env.DB, endpointId))!;
    // Refused once, it has a row; due again now.
    await runLaneOnce(endpointId, { fetch: receivers(() => new Response(null, { status: 500 })).fetch });
    await runInDurableObject(laneOf(env, endpointId), async (_, state) => {
      const stale = deliveryOf(state.storage.sql, seqs[0]!);
      // A manual retry delivered it while this attempt was out.
      deliveredMeanwhile(state.storage.sql, seqs[0]!, Date.now());
      const late = await attemptDelivery(
        {
          sql: state.storage.sql,
          db: env.DB,
          fetch: receivers(() => new Response("gone", { status: 410 })).fetch,
          now: Date.now,
          retrySeconds: [1],
        },
        endpoint,
        () => signersOf(["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]),
        stale as never,
        { id: `evt_${seqs[0]}`, body: "{}" },
      );
      expect(late).toMatchObject({ outcome: { kind: "gone" }, settle: { outcome: "failed" } });
      expect(settleNow(state.storage.sql, [(late as { settle: Settle }).settle], Date.now())).toBe(0);
    });
    expect(await laneDelivery(endpointId, seqs[0]!)).toMatchObject({ outcome: "delivered", last_status: 200 });
  });

  it("waits as long as a 429 or 503 asks with Retry-After, never past the schedule's span", async () => {
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [11]);
    const now = Date.now() + 1_000;
    const { fetch } = receivers(() => new Response("busy", { status: 429, headers: { "Retry-After": "5" } }));
    await runLaneOnce(endpointId, { fetch, now: () => now });
    expect(await laneDelivery(endpointId, seqs[0]!)).toMatchObject({ due_at: now + 5_000, last_status: 429 });

    const noon = Date.parse("2026-11-24T12:00:00Z");
    expect(nextDelaySeconds([1, 2, 3], 1, 503, 2)).toBe(2);
    expect(nextDelaySeconds([1, 2, 3], 1, 503, 3600)).toBe(6);
    expect(nextDelaySeconds([10, 60], 1, 503, 2)).toBe(10);
    expect(nextDelaySeconds([1, 2, 3], 2, 500, 3600)).toBe(2);
    expect(retryAfterSeconds("120", noon)).toBe(120);
    expect(retryAfterSeconds("Tue, 24 Nov 2026 12:01:00 GMT", noon)).toBe(60);
    expect(retryAfterSeconds("soon", noon)).toBeNull();
  });
});

describe("an account with no live key", () => {
  const failedForNoKey = {
    outcome: "failed",
    last_error: "the endpoint's account has no live key with orders:read (revoked, expired, or without that scope)",
  };
  const revoke = (key: TestKey) =>
    env.ACCOUNTS.getByName(key.record.budget ?? key.record.id).revokeKey(
      key.record.id,
      "retired",
      new Date().toISOString(),
    );

  it("gets nothing delivered once its key is revoked or expired, and again once a live key of the account exists", async () => {
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [12]);
    const { posts, fetch } = receivers();
    await revoke(owner);
    await runLaneOnce(endpointId, { fetch });
    expect(posts).toEqual([]);
    expect(await laneDelivery(endpointId, seqs[0]!)).toMatchObject(failedForNoKey);

    // A key of the account that has expired: still nothing.
    await storeTestKey({ budget: owner.record.id, expiresAt: new Date(Date.now() - 1000).toISOString() });
    await seedOrders([{ id: 13 }]);
    await dispatchQuietly();
    await runLaneOnce(endpointId, { fetch });
    expect(posts).toEqual([]);

    // A live key of the account (a rotation's new key): delivered again.
    await storeTestKey({ budget: owner.record.id });
    await seedOrders([{ id: 14 }]);
    await dispatchQuietly();
    await runLaneOnce(endpointId, { fetch });
    expect(posts).toHaveLength(1);
  });

  it("counts only keys that may read orders: an account whose one live key has webhooks:manage alone is sent nothing", async () => {
    const manager = await storeTestKey({ scopes: ["webhooks:manage"] });
    expect(await accountLiveness(env.ACCOUNTS, manager.record.id, new TtlCache(10))).toBe("dead");
    // A key of the account that reads orders brings them back.
    await storeTestKey({ scopes: ["orders:read"], budget: manager.record.id });
    expect(await accountLiveness(env.ACCOUNTS, manager.record.id, new TtlCache(10))).toBe("live");
  });

  it("stops a paced run within 5 s of its key's revocation, and fails the rest at the next run", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://paced.example/hooks", rateLimit: 1 });
    await seedOrders(Array.from({ length: 30 }, (_, index) => ({ id: 300 + index })));
    await dispatchQuietly();
    const began = Date.now();
    let clock = began;
    const revokedAt = began + 2_500;
    const { fetch, posts } = receivers(() => new Response("ok"));
    const liveness = new TtlCache<string, AccountLiveness>(4);
    const lane = {
      fetch,
      now: () => clock,
      // The key revoked while the lane waits its turn, the lane's word on the account 2.5 s old.
      sleep: async (ms: number) => {
        const revoking = clock < revokedAt && clock + ms >= revokedAt;
        clock += ms;
        if (revoking) await revoke(owner);
      },
      accountLiveness: (account: string) => accountLiveness(env.ACCOUNTS, account, liveness, clock),
    };
    await runLaneOnce(made.id, lane);
    // One start a second, as the lane logs them; none once its word on the account is 5 s old.
    const started = (await runInDurableObject(laneOf(env, made.id), (_, state) => newestLogged(state.storage.sql, 50)))
      .map(([, at]) => at)
      .sort((a, b) => a - b);
    expect(started).toEqual([0, 1_000, 2_000, 3_000, 4_000].map((after) => began + after));
    await runLaneOnce(made.id, lane);
    expect(posts).toHaveLength(5);
    const outcomes = (await laneDeliveries(made.id)).map((row) => row.outcome);
    expect(outcomes.filter((outcome) => outcome === "delivered")).toHaveLength(5);
    expect(outcomes.filter((outcome) => outcome === "failed")).toHaveLength(25);
  });

  it("delivers right after a rotation without grace, and fails at once once no live key is left", async () => {
    const first = await storeTestKey({ scopes: ["orders:read", "webhooks:manage", "keys:manage"] });
    const { endpointId, seqs } = await pendingDeliveries(first.key, [31, 32]);
    const rotated = await api(`/v2/keys/${first.record.id}/rotate`, {
      method: "POST",
      key: first.key,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ graceSeconds: 0 }),
    });
    const next = await rotated.json<{ id: string; key: string }>();
    const { posts, fetch } = receivers();
    // The account has the new key the moment it has the rotation: no listing to wait for.
    await runLaneOnce(endpointId, { fetch, now: () => Date.now() });
    expect(await laneDelivery(endpointId, seqs[0]!)).toMatchObject({ outcome: "delivered" });
    expect(posts.length).toBeGreaterThan(0);
    await env.ACCOUNTS.getByName(first.record.id).revokeKey(next.id, "retired", new Date().toISOString());
    await seedOrders([{ id: 33 }]);
    await dispatchQuietly();
    const sent = posts.length;
    await runLaneOnce(endpointId, { fetch });
    expect(posts).toHaveLength(sent);
  });
});
