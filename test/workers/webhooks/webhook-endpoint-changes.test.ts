import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runInDurableObject } from "cloudflare:test";
import { laneOf } from "../../../src/webhook-delivery/lane-calls";
import { failedRange, readSettled } from "../../../src/webhook-delivery/lane-settled";
import { addRetried, newestDeliveries } from "../../../src/webhook-delivery/lane-deliveries";
import { appendSettled, appendToLog } from "../../../src/webhook-delivery/lane-log";
import { replays } from "../../../src/webhook-delivery/lane-replays";
import type { WebhookLane } from "../../../src/webhook-delivery/lane-object";
import { MISSED } from "../../../src/webhook-delivery/lane-run";
import type { D1Queryable } from "../../../src/lib/d1-session";
import { api, apiWith, errorBodyOf } from "../../support/request";
import { seedOrders } from "../../support/seed";
import { storeTestKey } from "../../support/test-keys";
import {
  dispatchQuietly,
  laneDeliveries,
  makeEndpoint,
  pendingDeliveries,
  quietLanes,
  receivers,
  replaying,
  runLaneOnce,
  webhookOwnerOfEachTest,
  withoutDispatcher,
  settleNow,
} from "../../support/webhook-fixtures";

/**
 * An owner's changes to its endpoints (docs/api.md#webhook-endpoints): the
 * URL, the types, disabling and enabling again, each audited; a retry asked
 * of a disabled endpoint says so.
 */
const owner = webhookOwnerOfEachTest();
afterEach(() => vi.restoreAllMocks());
const OPERATOR = "Bearer operator-token-for-tests";

const change = (id: string, body: unknown, key = owner.key) =>
  apiWith(withoutDispatcher(), `/v2/webhook-endpoints/${id}`, {
    method: "PATCH",
    key,
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });

/** The audit of an endpoint after its making (whose own row the test of the audit checks). */
const auditOf = async (id: string) =>
  (
    await env.DB.prepare(
      "SELECT operation, changes, actor, outcome FROM webhook_endpoint_events WHERE endpoint_id = ?1 AND " +
        "operation <> " +
        "'create' ORDER BY id",
    )
      .bind(id)
      .all()
  ).results;

/** What the next dispatch pass hands each lane: endpoint and event. */
async function dispatched(): Promise<[string, string][]> {
  const handed: [string, string][] = [];
  await dispatchQuietly(async (id, seqs) => {
    handed.push(...seqs.map((seq) => [id, seq] as [string, string]));
    return quietLanes(id, seqs);
  });
  return handed;
}

describe("changing a webhook endpoint", () => {
  it("changes its URL and types, answers it as it is now, and audits who asked", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    const response = await change(made.id, {
      url: "https://other.example/hooks",
      types: ["order.shipped", "order.cancelled", "order.shipped"],
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      id: made.id,
      url: "https://other.example/hooks",
      types: ["order.cancelled", "order.shipped"],
      status: "enabled",
    });
    expect(await (await api(`/v2/webhook-endpoints/${made.id}`, { key: owner.key })).json()).toMatchObject({
      url: "https://other.example/hooks",
      types: ["order.cancelled", "order.shipped"],
    });
    expect(await auditOf(made.id)).toEqual([
      {
        operation: "update",
        changes: JSON.stringify({
          url: "https://other.example/hooks",
          types: ["order.shipped", "order.cancelled", "order.shipped"],
        }),
        actor: `key:${owner.record.id}`,
        outcome: null,
      },
    ]);
  });

  it("refuses what a new endpoint would be refused, and an empty change", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    expect((await errorBodyOf(await change(made.id, { url: "ftp://receiver.example/hooks" }))).code).toBe(
      "invalid_webhook_url",
    );
    expect((await errorBodyOf(await change(made.id, { types: ["order.exploded"] }))).code).toBe("invalid_body");
    expect((await errorBodyOf(await change(made.id, {}))).code).toBe("invalid_body");
    expect((await errorBodyOf(await change(made.id, { status: "paused" }))).code).toBe("invalid_body");
    expect((await errorBodyOf(await change(made.id, { secret: "mine" }))).code).toBe("invalid_body");
    expect(await auditOf(made.id)).toEqual([]);
  });

  it("is its account's only: another account's key gets 404 and changes nothing", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    const stranger = await storeTestKey({ scopes: ["orders:read", "webhooks:manage"] });
    const refused = await change(made.id, { status: "disabled" }, stranger.key);
    expect(refused.status).toBe(404);
    expect((await errorBodyOf(refused)).code).toBe("webhook_endpoint_not_found");
    expect(await (await api(`/v2/webhook-endpoints/${made.id}`, { key: owner.key })).json()).toMatchObject({
      status: "enabled",
    });
    expect(await auditOf(made.id)).toEqual([]);
  });

  it("disables it: no delivery is made for it, a retry says so; enabled again, the next event is delivered", async () => {
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [1]);
    const deliveryId = `wd_${endpointId.slice(3)}_${seqs[0]}`;
    expect((await change(endpointId, { status: "disabled" })).status).toBe(200);
    await seedOrders([{ id: 2 }]);
    expect(await dispatched()).toEqual([]);

    const retry = await api(`/v2/webhook-endpoints/${endpointId}/deliveries/${deliveryId}/retry`, {
      method: "POST",
      key: owner.key,
    });
    expect(retry.status).toBe(409);
    expect(await errorBodyOf(retry)).toMatchObject({
      code: "webhook_endpoint_disabled",
      message: expect.stringContaining("disabled by its owner"),
    });

    expect(await (await change(endpointId, { status: "enabled" })).json()).toMatchObject({ status: "enabled" });
    const next = (await env.DB.prepare("SELECT max(seq) AS seq FROM order_events").first<number>("seq"))!;
    await seedOrders([{ id: 3 }]);
    expect(await dispatched()).toEqual([[endpointId, String(next + 1)]]);
    vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("ok"));
    expect(
      (
        await api(`/v2/webhook-endpoints/${endpointId}/deliveries/${deliveryId}/retry`, {
          method: "POST",
          key: owner.key,
        })
      ).status,
    ).toBe(202);
    await vi.waitFor(
      async () =>
        expect((await laneDeliveries(endpointId)).find((row) => row.seq === seqs[0])?.outcome).toBe("delivered"),
      { timeout: 10_000 },
    );
  });

  it("fails as disabled only the events written before it was read disabled, though enabled again before the feed is read", async () => {
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [41, 42]);
    expect((await change(endpointId, { status: "disabled" })).status).toBe(200);
    // The lane reads the endpoint disabled; then, before it reads the feed, its owner enables it and an order changes.
    let raced = false;
    const racing: D1Queryable = {
      batch: (statements) => env.DB.batch(statements),
      prepare(query) {
        const statement = env.DB.prepare(query);
        if (raced || !query.includes("FROM webhook_endpoints WHERE id")) return statement;
        return {
          bind: (...values: unknown[]) => ({
            first: async () => {
              const row = await statement.bind(...values).first();
              raced = true;
              expect((await change(endpointId, { status: "enabled" })).status).toBe(200);
              await seedOrders([{ id: 43 }]);
              while ((await dispatchQuietly()).more);
              return row;
            },
          }),
        } as unknown as D1PreparedStatement;
      },
    };
    await runLaneOnce(endpointId, { db: racing, fetch: receivers().fetch });
    expect(raced).toBe(true);
    const [newer] = (await laneDeliveries(endpointId)).map((row) => row.seq).filter((seq) => !seqs.includes(seq));
    expect((await laneDeliveries(endpointId)).map((row) => [row.seq, row.outcome])).toEqual([
      ...seqs.map((seq) => [seq, "failed"]),
      [newer, "pending"],
    ]);
    const { fetch, posts } = receivers();
    await runLaneOnce(endpointId, { fetch });
    expect(posts.map((post) => post.webhookId)).toEqual([`evt_${newer}`]);
  });

  it("fails, once enabled again, what its lane had not sent by then: sent later only if recovered", async () => {
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [21]);
    const { fetch, posts } = receivers();
    await runLaneOnce(endpointId, { fetch });
    expect((await change(endpointId, { status: "disabled" })).status).toBe(200);
    await seedOrders([{ id: 22 }, { id: 23 }]);
    expect((await change(endpointId, { status: "enabled" })).status).toBe(200);
    await seedOrders([{ id: 24 }]);
    const [missedA, missedB, after] = (await laneDeliveries(endpointId)).map((row) => row.seq).slice(1);
    await dispatchQuietly();
    await runLaneOnce(endpointId, { fetch });
    expect(posts.map((post) => post.webhookId)).toEqual([`evt_${seqs[0]}`, `evt_${after}`]);
    expect(
      (await laneDeliveries(endpointId)).map((row) => [
        row.seq,
        row.outcome,
        row.outcome === "failed" && row.last_error,
      ]),
    ).toEqual([
      [seqs[0], "delivered", false],
      [missedA, "failed", MISSED],
      [missedB, "failed", MISSED],
      [after, "delivered", false],
    ]);

    // Recovered, they are due now: the lane, woken, sends them.
    vi.spyOn(globalThis, "fetch").mockImplementation(fetch);
    const since = new Date(Date.now() - 60_000).toISOString();
    const recovering = await apiWith(withoutDispatcher(), `/v2/webhook-endpoints/${endpointId}/recover`, {
      method: "POST",
      key: owner.key,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ since }),
    });
    expect(await recovering.json()).toEqual({ recovered: 2, more: false });
    await runInDurableObject(laneOf(env, endpointId), (lane: WebhookLane) => lane.running);
    expect(posts.map((post) => post.webhookId).slice(2)).toEqual([`evt_${missedA}`, `evt_${missedB}`]);
  });

  it("enables again what the service disabled after its receiver failed, not what an operator disabled", async () => {
    const byService = await makeEndpoint(owner.key, { url: "https://receiver.example/gone" });
    await env.DB.prepare(
      "UPDATE webhook_endpoints SET status = 'disabled', disabled_at = ?2, disabled_reason = 'the receiver answered " +
        "410 Gone', disabled_by = 'service' WHERE id = ?1",
    )
      .bind(byService.id, new Date().toISOString())
      .run();
    expect(await (await api(`/v2/webhook-endpoints/${byService.id}`, { key: owner.key })).json()).toMatchObject({
      status: "disabled",
      disabledBy: "service",
      disabledReason: "disabled by the service: the receiver answered 410 Gone",
    });
    expect(await (await change(byService.id, { status: "enabled" })).json()).toMatchObject({
      status: "enabled",
      disabledBy: null,
      disabledReason: null,
    });

    const byOperator = await makeEndpoint(owner.key, { url: "https://receiver.example/abusive" });
    expect(
      (
        await api(`/admin/webhook-endpoints/${byOperator.id}/disable`, {
          method: "POST",
          key: null,
          headers: { Authorization: OPERATOR },
        })
      ).status,
    ).toBe(200);
    const refused = await change(byOperator.id, { status: "enabled" });
    expect(refused.status).toBe(409);
    expect(await errorBodyOf(refused)).toMatchObject({
      code: "webhook_endpoint_locked",
      message: expect.stringContaining("only an operator"),
    });
    expect(await (await api(`/v2/webhook-endpoints/${byOperator.id}`, { key: owner.key })).json()).toMatchObject({
      status: "disabled",
      disabledBy: "operator",
      disabledReason: "disabled by an operator",
    });
    // Nor its URL (the lock would move away with it); its types may change. The audits of the refused changes are taken
    // back.
    expect((await errorBodyOf(await change(byOperator.id, { url: "https://receiver.example/fixed" }))).code).toBe(
      "webhook_endpoint_locked",
    );
    expect(await (await change(byOperator.id, { types: ["order.cancelled"] })).json()).toMatchObject({
      url: "https://receiver.example/abusive",
      status: "disabled",
      types: ["order.cancelled"],
    });
    expect((await auditOf(byOperator.id)).map((row) => row.operation)).toEqual(["disable", "update"]);
  });

  it("needs the webhooks:manage scope", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    const reader = await storeTestKey({ scopes: ["orders:read"] });
    expect((await errorBodyOf(await change(made.id, { status: "disabled" }, reader.key))).code).toBe(
      "insufficient_scope",
    );
  });
});

describe("recovering failed deliveries", () => {
  const recover = (id: string, body: unknown) =>
    apiWith(env, `/v2/webhook-endpoints/${id}/recover`, {
      method: "POST",
      key: owner.key,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
  // The recovered deliveries are sent by the lane's alarm: to a receiver that takes them, never to the network.
  beforeEach(() => void vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("ok")));

  /**
   * `count` failed deliveries to the endpoint's lane, of events firstSeq.. (kept in the feed, so a run can send them),
   * made at `createdAt`.
   */
  const failedDeliveries = async (endpointId: string, count: number, createdAt: string, firstSeq = 1) => {
    await env.DB.prepare(
      "WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1 + ?2 - 1) " +
        "INSERT OR IGNORE INTO order_events (seq, type, created_at, order_id, order_row) SELECT i, 'order.created', " +
        "?3, i, json_object('id', CAST(i AS TEXT), 'status', 'pending', 'complete', 0) FROM n",
    )
      .bind(firstSeq, count, createdAt)
      .run();
    await runInDurableObject(laneOf(env, endpointId), (_, state) => {
      state.storage.kv.put("endpointId", endpointId);
      const at = Date.parse(createdAt);
      appendSettled(
        state.storage.sql,
        Array.from({ length: count }, (_, index) => ({
          seq: firstSeq + index,
          outcome: "failed" as const,
          attempts: 4,
          lastStatus: 503,
          lastError: "the receiver answered 503",
          createdAt: at,
          settledAt: at,
          attemptLog: [],
        })),
      );
    });
  };

  /**
   * How many of the lane's deliveries are failed, and how many are not (due again, or already sent again by its run).
   */
  const outcomes = async (endpointId: string) => {
    const rows = await laneDeliveries(endpointId);
    return {
      failed: rows.filter((row) => row.outcome === "failed").length,
      recovered: rows.filter((row) => row.outcome !== "failed").length,
    };
  };

  it("asks to confirm the URL when it changed after since: those deliveries failed at another host", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    const since = new Date(Date.now() - 3_600_000).toISOString();
    await failedDeliveries(made.id, 3, since);
    // The URL moves to a new host after they failed: a recovery would aim them all at it.
    expect((await change(made.id, { url: "https://victim.example/" })).status).toBe(200);
    const asked = await errorBodyOf(await recover(made.id, { since }));
    expect(asked).toMatchObject({
      code: "webhook_url_unconfirmed",
      status: 409,
      message: expect.stringContaining('"confirmUrl": "https://victim.example/"'),
    });
    expect(await outcomes(made.id)).toEqual({ failed: 3, recovered: 0 });
    expect(
      (await errorBodyOf(await recover(made.id, { since, confirmUrl: "https://receiver.example/hooks" }))).code,
    ).toBe("webhook_url_unconfirmed");
    // Confirmed in any spelling of the URL they will go to.
    expect(await (await recover(made.id, { since, confirmUrl: "https://VICTIM.example:443/" })).json()).toEqual({
      recovered: 3,
      more: false,
    });
    // A window that starts after the change needs no confirmation.
    await failedDeliveries(made.id, 1, "2099-01-01T00:00:00.000Z", 100);
    expect(await (await recover(made.id, { since: new Date(Date.now() + 60_000).toISOString() })).json()).toEqual({
      recovered: 1,
      more: false,
    });
  });

  it("makes every failed delivery since the time due again with a fresh schedule, and audits it", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    await failedDeliveries(made.id, 2, "2030-01-01T00:00:00.000Z");
    await failedDeliveries(made.id, 3, "2030-01-02T00:00:00.000Z", 3);
    const response = await recover(made.id, { since: "2030-01-02T01:00:00+01:00" });
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ recovered: 3, more: false });
    // The three since then, each due again with a fresh schedule (sent, or about to be, by the lane).
    const rows = await laneDeliveries(made.id);
    expect(rows.filter((row) => row.outcome !== "failed").map((row) => [row.seq, row.schedule_step])).toEqual(
      [3, 4, 5].map((seq) => [seq, 0]),
    );
    expect(rows.filter((row) => row.outcome === "failed").map((row) => row.seq)).toEqual([1, 2]);
    expect(await auditOf(made.id)).toEqual([
      {
        operation: "recover",
        changes: JSON.stringify({ since: "2030-01-02T00:00:00.000Z" }),
        actor: `key:${owner.record.id}`,
        outcome: null,
      },
    ]);
  });

  it("recovers a failed notice and a failed range's events, but not those with a row of their own since", async () => {
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [81, 82, 83, 84]);
    const [first, middle, third, last] = seqs as [number, number, number, number];
    const at = Date.now();
    const entry = { attempts: 1, lastStatus: 503, lastError: "the receiver answered 503", attemptLog: [] };
    const pendingNow = await runInDurableObject(laneOf(env, endpointId), async (lane: WebhookLane, state) => {
      const { sql } = state.storage;
      state.storage.kv.put("endpointId", endpointId);
      // Past the cursor, the four failed as one range, the notice failed; then the middle one retried and delivered,
      // and the third retried, still pending.
      appendToLog(sql, { from: first - 1, through: last });
      appendSettled(sql, [
        failedRange(first - 1, last, "the endpoint is disabled", at, at),
        { ...entry, seq: -5, outcome: "failed", createdAt: at, settledAt: at },
      ]);
      appendSettled(sql, [{ ...entry, seq: middle, outcome: "delivered", createdAt: at, settledAt: at + 1 }]);
      addRetried(sql, third, undefined, at, at + 2);
      expect(await lane.recover(endpointId, at - 1, 1_000)).toEqual({ recovered: 3, more: false });
      // The notice has its row again; the range is replayed from one row, those with rows of their own left out.
      expect(replays(sql).map((replay) => [replay.after, replay.seq, replay.skip.sort()])).toEqual([
        [first - 1, last, [middle, third].sort()],
      ]);
      return newestDeliveries(sql, 10).map((row) => row.seq);
    });
    expect(pendingNow.sort((a, b) => a - b)).toEqual([-5, third]);
  });

  it("recovers of a range failed at once only the events made since: those made before stay failed", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    const hour = 3_600_000;
    const now = Date.now();
    // Four events past any other: two made three hours ago, two one hour ago.
    const base = 9_000_000;
    const seqs = [base + 1, base + 2, base + 3, base + 4];
    for (const [index, seq] of seqs.entries())
      await env.DB.prepare(
        "INSERT INTO order_events (seq, type, created_at, order_id, order_row) VALUES (?1, 'order.created', ?2, ?1, " +
          "json_object('id', CAST(?1 AS TEXT), 'status', 'pending', 'complete', 0))",
      )
        .bind(seq, new Date(now - (index < 2 ? 3 : 1) * hour).toISOString())
        .run();
    const lane = laneOf(env, made.id);
    const recoverSince = (since: number) =>
      runInDurableObject(lane, (object: WebhookLane) => object.recover(made.id, since, 1_000));
    await runInDurableObject(lane, (_, state) => {
      state.storage.kv.put("endpointId", made.id);
      appendToLog(state.storage.sql, { from: base, through: base + 4 });
      appendSettled(state.storage.sql, [
        failedRange(base, base + 4, "the endpoint is disabled", now - 3 * hour, now - hour / 2),
      ]);
    });
    expect(await recoverSince(now - 2 * hour)).toEqual({ recovered: 2, more: false });
    expect(
      (await laneDeliveries(made.id)).filter((row) => row.seq > base).map((row) => [row.seq, row.outcome]),
    ).toEqual([
      [seqs[0], "failed"],
      [seqs[1], "failed"],
      [seqs[2], "pending"],
      [seqs[3], "pending"],
    ]);
    expect(await recoverSince(now - 2 * hour)).toEqual({ recovered: 0, more: false });
    expect(await recoverSince(now - 4 * hour)).toEqual({ recovered: 2, more: false });
  });

  it("retries one of a recovered range's events at once: it gets a row, and the range's replay leaves it out", async () => {
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [71, 72, 73, 74]);
    await replaying(endpointId, seqs[0]!, seqs.at(-1)!);
    const posted = vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response(null, { status: 204 }));
    const { retried, skip } = await runInDurableObject(laneOf(env, endpointId), async (lane: WebhookLane, state) => {
      const view = await lane.retry(endpointId, seqs[2]!, 10);
      // Read before the run it woke could record anything: once its row settles, the replay must not send it again.
      const held = replays(state.storage.sql).map((replay) => replay.skip);
      await lane.running;
      return { retried: view, skip: held };
    });
    expect(retried).toMatchObject({ eventId: `evt_${seqs[2]}`, outcome: "pending" });
    expect(skip).toEqual([[seqs[2]]]);
    const sent = posted.mock.calls.map(([, init]) => new Headers(init?.headers).get("webhook-id"));
    expect(sent.sort()).toEqual(seqs.map((seq) => `evt_${seq}`).sort());
    expect((await laneDeliveries(endpointId)).map((row) => row.outcome)).toEqual(seqs.map(() => "delivered"));
  });

  it("fails a recovered range not yet sent as one entry again when its endpoint is disabled, around those it left out", async () => {
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [75, 76, 77, 78]);
    const [first, left, third, last] = seqs as [number, number, number, number];
    await replaying(endpointId, first, last, [left]);
    await env.DB.prepare("UPDATE webhook_endpoints SET status = 'disabled', disabled_by = 'owner' WHERE id = ?1")
      .bind(endpointId)
      .run();
    const { fetch, posts } = receivers();
    await runLaneOnce(endpointId, { fetch });
    expect(posts).toEqual([]);
    const ranges = await runInDurableObject(laneOf(env, endpointId), (_, state) => ({
      replays: replays(state.storage.sql),
      failed: readSettled(state.storage.sql, () => true).filter((entry) => (entry.after ?? entry.seq) < entry.seq),
    }));
    expect(ranges.replays).toEqual([]);
    expect(ranges.failed.map((entry) => [entry.after, entry.seq, entry.lastError]).reverse()).toEqual([
      [first - 1, first, "the endpoint is disabled"],
      [left, last, "the endpoint is disabled"],
    ]);
    expect((await laneDeliveries(endpointId)).map((row) => [row.seq, row.outcome])).toEqual([
      [first, "failed"],
      [third, "failed"],
      [last, "failed"],
    ]);
  });

  it("fails a recovered range again as made when its events were: a later since does not take them", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    const hour = 3_600_000;
    const now = Date.now();
    const base = 9_100_000;
    for (const seq of [base + 1, base + 2])
      await env.DB.prepare(
        "INSERT INTO order_events (seq, type, created_at, order_id, order_row) VALUES (?1, 'order.created', ?2, ?1, " +
          "json_object('id', CAST(?1 AS TEXT), 'status', 'pending', 'complete', 0))",
      )
        .bind(seq, new Date(now - 3 * hour).toISOString())
        .run();
    const lane = laneOf(env, made.id);
    await runInDurableObject(lane, (_, state) => {
      state.storage.kv.put("endpointId", made.id);
      appendToLog(state.storage.sql, { from: base, through: base + 2 });
      appendSettled(state.storage.sql, [
        failedRange(base, base + 2, "the endpoint is disabled", now - 3 * hour, now - hour),
      ]);
    });
    // Disabled again before its replay sends anything: the run recover wakes fails it again.
    await env.DB.prepare("UPDATE webhook_endpoints SET status = 'disabled', disabled_by = 'owner' WHERE id = ?1")
      .bind(made.id)
      .run();
    const recoverSince = (since: number) =>
      runInDurableObject(lane, async (object: WebhookLane) => {
        const recovered = await object.recover(made.id, since, 1_000);
        await object.running;
        return recovered;
      });
    expect(await recoverSince(now - 4 * hour)).toEqual({ recovered: 2, more: false });
    expect((await laneDeliveries(made.id)).filter((row) => row.seq > base).map((row) => row.outcome)).toEqual([
      "failed",
      "failed",
    ]);
    expect(await recoverSince(now - 2 * hour)).toEqual({ recovered: 0, more: false });
  });

  it("takes 1,000 a request and says when more remain, none while its lane has 1,000 pending", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    // An hour ago: the lane settles what it sends now, after them, as a lane's clock goes.
    const since = new Date(Date.now() - 7_200_000).toISOString();
    await failedDeliveries(made.id, 1_001, new Date(Date.now() - 3_600_000).toISOString());
    expect(await (await recover(made.id, { since })).json()).toEqual({
      recovered: 1_000,
      more: true,
    });
    expect(await outcomes(made.id)).toEqual({ failed: 1, recovered: 1_000 });
    expect(await (await recover(made.id, { since })).json()).toEqual({ recovered: 0, more: true });
    // Its lane sends them and they settle.
    await runInDurableObject(laneOf(env, made.id), (_, state) => {
      const { sql } = state.storage;
      const rows = newestDeliveries(sql, 1_000);
      settleNow(
        sql,
        rows.map((row) => ({ seq: row.seq, outcome: "delivered", error: null, updatedAt: row.updated_at })),
        Date.now(),
      );
    });
    expect(await (await recover(made.id, { since })).json()).toEqual({
      recovered: 1,
      more: false,
    });
    expect(await outcomes(made.id)).toEqual({ failed: 0, recovered: 1_001 });
  });

  it("refuses a disabled endpoint, another account's, and a since that is not an instant", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    expect((await errorBodyOf(await recover(made.id, { since: "yesterday" }))).code).toBe("invalid_body");
    await change(made.id, { status: "disabled" });
    expect((await errorBodyOf(await recover(made.id, { since: "2030-01-01T00:00:00Z" }))).code).toBe(
      "webhook_endpoint_disabled",
    );
    const stranger = await storeTestKey({ scopes: ["orders:read", "webhooks:manage"] });
    const other = await api(`/v2/webhook-endpoints/${made.id}/recover`, {
      method: "POST",
      key: stranger.key,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ since: "2030-01-01T00:00:00Z" }),
    });
    expect((await errorBodyOf(other)).code).toBe("webhook_endpoint_not_found");
  });
});

describe("a test event", () => {
  const test = (id: string) =>
    apiWith(withoutDispatcher(), `/v2/webhook-endpoints/${id}/test`, { method: "POST", key: owner.key });

  it("is POSTed at once, signed as a delivery, and answers what the receiver said; it is no delivery", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    const posts: { url: string; body: string; headers: Record<string, string> }[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (url, init) => {
      posts.push({
        url: String(url),
        body: String(init!.body),
        headers: Object.fromEntries(new Headers(init!.headers)),
      });
      return new Response("thanks, ".repeat(100), { status: 202 });
    });
    const response = await test(made.id);
    expect(response.status).toBe(200);
    const result = await response.json<{
      id: string;
      delivered: boolean;
      status: number;
      durationMs: number;
      response: string;
      error: null;
    }>();
    expect(result).toEqual({
      id: expect.stringMatching(/^evt_test_[0-9a-f]{32}$/),
      delivered: true,
      status: 202,
      durationMs: expect.any(Number),
      response: "thanks, ".repeat(32),
      error: null,
    });
    expect(posts).toHaveLength(1);
    expect(posts[0]!.url).toBe("https://receiver.example/hooks");
    expect(new Webhook(made.secret).verify(posts[0]!.body, posts[0]!.headers)).toEqual({
      id: result.id,
      type: "webhook.test",
      createdAt: expect.any(String),
      endpointId: made.id,
    });
    expect(
      (await (await api(`/v2/webhook-endpoints/${made.id}/deliveries`, { key: owner.key })).json<{ data: unknown[] }>())
        .data,
    ).toEqual([]);
  });

  it("says what went wrong when the receiver cannot be reached, and is refused for a disabled endpoint", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    vi.spyOn(globalThis, "fetch").mockRejectedValue(new TypeError("Network connection lost."));
    expect(await (await test(made.id)).json()).toMatchObject({
      delivered: false,
      status: null,
      response: null,
      error: "could not connect",
    });
    await change(made.id, { status: "disabled" });
    expect((await errorBodyOf(await test(made.id))).code).toBe("webhook_endpoint_disabled");
  });

  it("is sent at most 10 times a minute per account, across its endpoints: the 11th is 429 too_many_test_events with Retry-After, and nothing is POSTed", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    const other = await makeEndpoint(owner.key, { url: "https://receiver.example/other" });
    const posts = vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("ok"));
    for (let n = 0; n < 6; n++) expect((await test(made.id)).status).toBe(200);
    for (let n = 0; n < 4; n++) expect((await test(other.id)).status).toBe(200);
    const refused = await test(made.id);
    expect(refused.status).toBe(429);
    const wait = Number(refused.headers.get("Retry-After"));
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(60);
    expect(await errorBodyOf(refused)).toMatchObject({ code: "too_many_test_events", status: 429 });
    expect((await test(other.id)).status).toBe(429);
    // Deleting an endpoint and making it again starts nothing over: the limit is the account's, not the lane's.
    expect((await api(`/v2/webhook-endpoints/${other.id}`, { method: "DELETE", key: owner.key })).status).toBe(204);
    const again = await makeEndpoint(owner.key, { url: "https://receiver.example/other" });
    expect((await test(again.id)).status).toBe(429);
    expect(posts).toHaveBeenCalledTimes(10);
    // Refused ones leave no count: six tests of this endpoint, not seven (counted an hour a row).
    expect(
      (await auditOf(made.id))
        .filter((row) => row.operation === "test")
        .map((row) => (JSON.parse(String(row.changes)) as { count: number }).count),
    ).toEqual([6]);
    // Another account counts its own.
    const stranger = await storeTestKey({ scopes: ["orders:read", "webhooks:manage"] });
    const theirs = await makeEndpoint(stranger.key, { url: "https://receiver.example/theirs" });
    expect((await api(`/v2/webhook-endpoints/${theirs.id}/test`, { method: "POST", key: stranger.key })).status).toBe(
      200,
    );
  });
});

describe("an operator's disabling", () => {
  const operator = (id: string, action: "disable" | "enable") =>
    api(`/admin/webhook-endpoints/${id}/${action}`, {
      method: "POST",
      key: null,
      headers: { Authorization: OPERATOR },
    });
  const create = (url: string) =>
    apiWith(withoutDispatcher(), "/v2/webhook-endpoints", {
      method: "POST",
      key: owner.key,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ url }),
    });

  it("is lifted by no back door: the owner can neither delete the endpoint nor make another of its URL; an operator enables it", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/abusive" });
    await change(made.id, { status: "disabled" });
    expect((await operator(made.id, "disable")).status).toBe(200);
    // The operator's disabling took over the owner's: the owner is told an operator did it, and by no name.
    const refused = await errorBodyOf(await change(made.id, { status: "enabled" }));
    expect(refused).toMatchObject({ code: "webhook_endpoint_locked" });
    expect(refused.message).not.toContain("operator-token");
    expect(
      (await errorBodyOf(await api(`/v2/webhook-endpoints/${made.id}`, { method: "DELETE", key: owner.key }))).code,
    ).toBe("webhook_endpoint_locked");
    expect((await errorBodyOf(await create("https://receiver.example/abusive"))).code).toBe("webhook_endpoint_locked");
    expect((await create("https://receiver.example/another")).status).toBe(201);

    const enabling = new Date().toISOString();
    expect(await (await operator(made.id, "enable")).json()).toEqual({ endpointId: made.id, status: "enabled" });
    expect((await auditOf(made.id)).map((row) => row.operation)).toEqual(["update", "disable", "enable"]);
    // Its failing period starts afresh: no failure before the enabling counts (docs/api.md#failing-endpoints).
    const { enabled_at } = (await env.DB.prepare("SELECT enabled_at FROM webhook_endpoints WHERE id = ?1")
      .bind(made.id)
      .first<{ enabled_at: string }>())!;
    expect(enabled_at >= enabling).toBe(true);
    // Enabled again while enabled, it keeps when it was.
    expect((await change(made.id, { status: "enabled" })).status).toBe(200);
    expect((await operator(made.id, "enable")).status).toBe(200);
    const kept = await env.DB.prepare("SELECT enabled_at FROM webhook_endpoints WHERE id = ?1")
      .bind(made.id)
      .first<string>("enabled_at");
    expect(kept).toBe(enabled_at);
    expect((await api(`/v2/webhook-endpoints/${made.id}`, { method: "DELETE", key: owner.key })).status).toBe(204);
  });

  it("holds the URL in every spelling, on creation and on every change: another of its URL, a PATCH of another endpoint to it, a move of the locked one's own URL", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/abusive" });
    const other = await makeEndpoint(owner.key, { url: "https://receiver.example/other" });
    expect((await operator(made.id, "disable")).status).toBe(200);
    for (const spelling of [
      "https://RECEIVER.example:443/abusive",
      "https://receiver.EXAMPLE./abusive".replace("EXAMPLE.", "example"),
      "https://receiver.example/%61busive",
      "HTTPS://receiver.example/abusive",
    ]) {
      expect((await errorBodyOf(await create(spelling))).code, spelling).toBe("webhook_endpoint_locked");
      expect((await errorBodyOf(await change(other.id, { url: spelling }))).code, spelling).toBe(
        "webhook_endpoint_locked",
      );
    }
    // The locked endpoint's URL cannot move away (after which it could be made again).
    const moved = await errorBodyOf(await change(made.id, { url: "https://receiver.example/elsewhere" }));
    expect(moved).toMatchObject({
      code: "webhook_endpoint_locked",
      message: expect.stringContaining("change its URL"),
    });
    expect((await errorBodyOf(await create("https://receiver.example/abusive"))).code).toBe("webhook_endpoint_locked");
    // A fragment is refused: the receiver never sees it, and it would be one more spelling.
    expect((await errorBodyOf(await create("https://receiver.example/abusive#again"))).code).toBe(
      "invalid_webhook_url",
    );
    // What is stored and shown is the one form.
    const spelled = await create("https://Receiver.Example:443/%7Eteam/hooks");
    expect(spelled.status).toBe(201);
    expect((await spelled.json<{ url: string }>()).url).toBe("https://receiver.example/~team/hooks");
    // Other endpoints of the account change as before.
    expect((await change(other.id, { url: "https://receiver.example/another" })).status).toBe(200);
  });
});

describe("edge cases of the owner's operations", () => {
  it("recovers nothing without an audit row when nothing failed, and refuses a since whose offset moves it out of the four-digit years", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    const recover = (since: string) =>
      apiWith(withoutDispatcher(), `/v2/webhook-endpoints/${made.id}/recover`, {
        method: "POST",
        key: owner.key,
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ since }),
      });
    expect(await (await recover("2030-01-01T00:00:00Z")).json()).toEqual({ recovered: 0, more: false });
    expect(await auditOf(made.id)).toEqual([]);
    expect((await errorBodyOf(await recover("0000-01-01T00:00:00+00:30"))).code).toBe("invalid_body");
  });

  it("sends no test event to a URL today's rules refuse, and reports a receiver that stalls after its status as answering", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    // The receiver answers its status, then never a byte of its body: only the POST's own timeout (shortened) ends the
    // read.
    const timeout = AbortSignal.timeout.bind(AbortSignal);
    const shortened = vi.spyOn(AbortSignal, "timeout").mockImplementation(() => timeout(50));
    const fetched = vi.spyOn(globalThis, "fetch").mockImplementation(async (_url, init) => {
      const signal = init?.signal ?? undefined;
      const body = new ReadableStream({
        start: (controller) =>
          signal?.aborted
            ? controller.error(signal.reason)
            : signal?.addEventListener("abort", () => controller.error(signal.reason)),
      });
      return new Response(body, { status: 200 });
    });
    const answered = await (
      await apiWith(withoutDispatcher(), `/v2/webhook-endpoints/${made.id}/test`, { method: "POST", key: owner.key })
    ).json();
    expect(answered).toMatchObject({ delivered: true, status: 200, response: null, error: null });
    expect(shortened).toHaveBeenCalledWith(10_000);
    shortened.mockRestore();

    await env.DB.prepare("UPDATE webhook_endpoints SET url = 'https://10.0.0.1/hooks' WHERE id = ?1")
      .bind(made.id)
      .run();
    fetched.mockClear();
    const deployed = { ...withoutDispatcher(), BASE_URL: "https://store-orders.example.com/v1" };
    const refused = await (
      await apiWith(deployed, `/v2/webhook-endpoints/${made.id}/test`, { method: "POST", key: owner.key })
    ).json();
    expect(refused).toMatchObject({ delivered: false, status: null, error: expect.stringMatching(/^not sent: /) });
    expect(fetched).not.toHaveBeenCalled();
  });
});
