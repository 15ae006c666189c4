import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { describe, expect, it, vi } from "vitest";
import { EndpointNotice } from "../../../src/webhooks/endpoints/webhook-endpoint-schemas";
import { NOTICE_RETENTION_MS, NOTICE_ROW_BYTES, pruneNotices } from "../../../src/webhook-delivery/endpoint-notices";
import type { HandToLane } from "../../../src/webhook-delivery/dispatch-pass";
import { OWED_NOTICE_RETRY_MS, recentFailures } from "../../../src/webhook-delivery/endpoint-watch";
import { appendSettled } from "../../../src/webhook-delivery/lane-log";
import { deliveryIdOf, laneOf } from "../../../src/webhook-delivery/lane-calls";
import { DELIVERY_LOG_MS } from "../../../src/webhook-delivery/lane-retention";
import type { WebhookLane } from "../../../src/webhook-delivery/lane-object";
import {
  addRetried,
  behindInLine,
  dueInOrder,
  headOfLine,
  newestDeliveries,
} from "../../../src/webhook-delivery/lane-deliveries";
import { interceptD1 } from "../../support/faults";
import { apiWith } from "../../support/request";
import { seedOrders } from "../../support/seed";
import { storeTestKey } from "../../support/test-keys";
import {
  dispatchQuietly,
  laneDeliveries,
  makeEndpoint,
  outageStatement,
  quietLanes,
  receivers,
  runLaneOnce,
  webhookOwnerOfEachTest,
  withoutDispatcher,
} from "../../support/webhook-fixtures";

/**
 * Failing endpoints (docs/api.md#failing-endpoints): disabled on time, as
 * Svix does, and their owner told by another path than the failing
 * endpoint. The periods are shortened here as WEBHOOK_FAILING_AFTER and
 * WEBHOOK_DISABLE_AFTER shorten them; the lane runs on the test's clock,
 * and one event at a time reaches the failing endpoint, each tried once
 * (a long retry schedule), so the attempts are the test's to count.
 */
const owner = webhookOwnerOfEachTest();
const HEALTH = { failingAfterMs: 10_000, disableAfterMs: 60_000 };
const NOTICES = ["webhook_endpoint.failing", "webhook_endpoint.disabled"];
let nextOrder = 9_000;

const refusing = () => receivers(() => new Response("down", { status: 503 }));

/** The owner's endpoints: the failing one (order events), one that watches it, one on the default types. */
async function budgetWithWatcher() {
  const failing = await makeEndpoint(owner.key, { url: "https://failing.example/hooks" });
  const watcher = await makeEndpoint(owner.key, { url: "https://pager.example/hooks", types: NOTICES });
  const plain = await makeEndpoint(owner.key, { url: "https://plain.example/hooks" });
  return { failing, watcher, plain };
}

/**
 * One new event, handed to the lanes; then one run of `endpointId`'s lane at `at`, its receiver refusing (or
 * answering as `fetch` does): one attempt, its retry a day away.
 */
async function failedRunAt(
  endpointId: string,
  at: number,
  handToLane: HandToLane = quietLanes,
  fetch = refusing().fetch,
) {
  await seedOrders([{ id: nextOrder++ }]);
  await dispatchQuietly();
  return runLaneOnce(endpointId, { fetch, now: () => at, retrySeconds: [86_400], health: HEALTH, handToLane });
}

/** One run of `endpointId`'s lane at `at`, its receiver refusing; retried on `retrySeconds` (the local 1,2,3). */
const refusedRunAt = (endpointId: string, at: number, retrySeconds = [1, 2, 3]) =>
  runLaneOnce(endpointId, { fetch: refusing().fetch, now: () => at, retrySeconds, health: HEALTH });

/** The statement, whose `first()` does `then` once its own answer is in, before the caller has it. */
const afterRead = (statement: D1PreparedStatement, then: () => Promise<unknown>): D1PreparedStatement =>
  new Proxy(statement, {
    get(target, property) {
      if (property === "bind") return (...values: unknown[]) => afterRead(target.bind(...values), then);
      if (property === "first")
        return async (...args: []) => {
          const answer = await target.first(...args);
          await then();
          return answer;
        };
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });

/**
 * The owner's endpoints, the failing one refused at its period's start and twice in its second half, a second short
 * of WEBHOOK_DISABLE_AFTER: its next failed run would disable it. The watcher has been told it is failing.
 */
async function failingToTheEdgeOfDisabling() {
  const { failing, watcher } = await budgetWithWatcher();
  const t0 = Date.now() + 1_000;
  await failedRunAt(failing.id, t0);
  await failedRunAt(failing.id, t0 + HEALTH.disableAfterMs - 2_000);
  await failedRunAt(failing.id, t0 + HEALTH.disableAfterMs - 1_000);
  expect(await noticeDeliveries(watcher.id)).toHaveLength(1);
  return { failing, watcher, t0 };
}

/** An endpoint failing since t0 (its second failed run a second later), and a D1 whose health writes fail. */
async function failingWithHealthWritesDown() {
  const { failing } = await budgetWithWatcher();
  const t0 = Date.now() + 1_000;
  await failedRunAt(failing.id, t0);
  await failedRunAt(failing.id, t0 + 1_000);
  const healthDown = interceptD1({
    prepare: (statement, sql) => (sql.includes("SET failing_since") ? outageStatement() : statement),
  });
  return { failing, t0, healthDown };
}

const noticeDeliveries = async (endpointId: string) => (await laneDeliveries(endpointId)).filter((row) => row.seq < 0);

const endpointRow = (id: string) =>
  env.DB.prepare("SELECT status, disabled_by, disabled_reason, failing_since FROM webhook_endpoints WHERE id = ?1")
    .bind(id)
    .first<{
      status: string;
      disabled_by: string | null;
      disabled_reason: string | null;
      failing_since: string | null;
    }>();

/** The owner's `recover` of the endpoint's deliveries failed since `since`. */
const recover = (id: string, since: Date) =>
  apiWith(withoutDispatcher(), `/v2/webhook-endpoints/${id}/recover`, {
    method: "POST",
    key: owner.key,
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ since: since.toISOString() }),
  });

const patch = (id: string, body: object) =>
  apiWith(withoutDispatcher(), `/v2/webhook-endpoints/${id}`, {
    method: "PATCH",
    key: owner.key,
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });

describe("a failing endpoint", () => {
  it("is told to the account's endpoints that name webhook_endpoint.failing once it has failed for WEBHOOK_FAILING_AFTER: once a period, signed, never to itself, the default types or another account", async () => {
    const { failing, watcher, plain } = await budgetWithWatcher();
    const stranger = await storeTestKey({ scopes: ["orders:read", "webhooks:manage"] });
    const elsewhere = await makeEndpoint(stranger.key, { url: "https://elsewhere.example/hooks", types: NOTICES });
    const t0 = Date.now() + 1_000;
    await failedRunAt(failing.id, t0);
    // One failed run opens no period; the next opens it, from the first failure.
    expect((await endpointRow(failing.id))!.failing_since).toBeNull();
    // Failing, but not yet for WEBHOOK_FAILING_AFTER: nobody is told.
    await failedRunAt(failing.id, t0 + HEALTH.failingAfterMs - 1);
    expect((await endpointRow(failing.id))!.failing_since).toBe(new Date(t0).toISOString());
    expect(await noticeDeliveries(watcher.id)).toEqual([]);

    await failedRunAt(failing.id, t0 + HEALTH.failingAfterMs);
    const [notice] = await noticeDeliveries(watcher.id);
    expect(notice).toMatchObject({ outcome: "pending" });
    for (const other of [failing, plain, elsewhere]) expect(await noticeDeliveries(other.id)).toEqual([]);
    // Failing on: told once a period.
    await failedRunAt(failing.id, t0 + HEALTH.failingAfterMs + 5_000);
    expect(await noticeDeliveries(watcher.id)).toHaveLength(1);

    // The watcher's lane sends it as it sends an event: signed, with an id of its own, carrying the endpoint.
    const posted: { headers: Headers; body: string }[] = [];
    await runLaneOnce(watcher.id, {
      fetch: (async (_url: string, init: RequestInit) => {
        posted.push({ headers: new Headers(init.headers), body: String(init.body) });
        return new Response(null, { status: 204 });
      }) as unknown as typeof fetch,
      health: HEALTH,
    });
    expect(posted).toHaveLength(1);
    const { headers, body } = posted[0]!;
    const verified = new Webhook(watcher.secret).verify(body, Object.fromEntries(headers)) as unknown;
    expect(EndpointNotice.parse(verified)).toEqual({
      id: `ntc_${-notice!.seq}`,
      type: "webhook_endpoint.failing",
      createdAt: new Date(t0 + HEALTH.failingAfterMs).toISOString(),
      endpoint: {
        id: failing.id,
        url: "https://failing.example/hooks",
        status: "enabled",
        failingSince: new Date(t0).toISOString(),
        lastDeliveredAt: null,
        disabledReason: null,
      },
    });
    expect(headers.get("webhook-id")).toBe(`ntc_${-notice!.seq}`);
    // The watcher's owner sees it in the delivery log, by the notice's id.
    const log = await (await apiWith(env, `/v2/webhook-endpoints/${watcher.id}/deliveries`, { key: owner.key })).json<{
      data: { eventId: string; outcome: string }[];
    }>();
    expect(log.data).toEqual([expect.objectContaining({ eventId: `ntc_${-notice!.seq}`, outcome: "delivered" })]);
    // Failing on once the watcher has it: still told once.
    await failedRunAt(failing.id, t0 + HEALTH.failingAfterMs + 6_000);
    expect((await noticeDeliveries(watcher.id)).map((row) => row.outcome)).toEqual(["delivered"]);
    // And its owner reads the failing period on the endpoint itself (the console's banner).
    expect(await (await apiWith(env, `/v2/webhook-endpoints/${failing.id}`, { key: owner.key })).json()).toMatchObject({
      status: "enabled",
      failingSince: new Date(t0).toISOString(),
      lastDeliveredAt: null,
    });
  });

  it("is never told of its own failing, though its types name the notice", async () => {
    const failing = await makeEndpoint(owner.key, {
      url: "https://failing-and-watching.example/hooks",
      types: ["order.created", ...NOTICES],
    });
    const watcher = await makeEndpoint(owner.key, { url: "https://pager.example/hooks", types: NOTICES });
    const t0 = Date.now() + 1_000;
    await failedRunAt(failing.id, t0);
    await failedRunAt(failing.id, t0 + HEALTH.failingAfterMs);
    expect(await noticeDeliveries(watcher.id)).toHaveLength(1);
    expect(await noticeDeliveries(failing.id)).toEqual([]);
  });

  it("owes nothing when no endpoint would be told: its notice is made as the period's mark, and its lane keeps none", async () => {
    const failing = await makeEndpoint(owner.key, {
      url: "https://failing-and-watching.example/hooks",
      types: ["order.created", ...NOTICES],
    });
    await makeEndpoint(owner.key, { url: "https://plain.example/hooks" });
    const put: string[] = [];
    await runInDurableObject(laneOf(env, failing.id), (_, state) => {
      const { kv } = state.storage;
      const real = kv.put;
      kv.put = ((key: string, value: unknown) => (put.push(key), real.call(kv, key, value))) as typeof kv.put;
    });
    const handed: string[] = [];
    const counting: HandToLane = (endpointId, seqs) => (handed.push(endpointId), quietLanes(endpointId, seqs));
    const t0 = Date.now() + 1_000;
    await failedRunAt(failing.id, t0, counting);
    await failedRunAt(failing.id, t0 + HEALTH.failingAfterMs, counting);
    expect(
      await env.DB.prepare("SELECT type, period_from FROM endpoint_notices WHERE endpoint_id = ?1")
        .bind(failing.id)
        .all(),
    ).toMatchObject({ results: [{ type: "webhook_endpoint.failing", period_from: new Date(t0).toISOString() }] });
    expect(put).not.toContain("owedNotices");
    expect(put.length).toBeGreaterThan(0);
    expect(handed).toEqual([]);
  });

  it("is disabled once every attempt has failed for WEBHOOK_DISABLE_AFTER with 3 failed attempts in the period's second half, told as webhook_endpoint.disabled; its deliveries recover once enabled, and a new period starts", async () => {
    const { failing, watcher } = await budgetWithWatcher();
    const t0 = Date.now() + 1_000;
    await failedRunAt(failing.id, t0);
    // Past WEBHOOK_DISABLE_AFTER, but one failed attempt in the period's second half says little of the receiver now.
    await failedRunAt(failing.id, t0 + HEALTH.disableAfterMs + 1_000);
    expect((await endpointRow(failing.id))!.status).toBe("enabled");
    await failedRunAt(failing.id, t0 + HEALTH.disableAfterMs + 2_000);
    expect((await endpointRow(failing.id))!.status).toBe("enabled");
    const disabledAt = t0 + HEALTH.disableAfterMs + 3_000;
    await failedRunAt(failing.id, disabledAt);
    expect(await endpointRow(failing.id)).toEqual({
      status: "disabled",
      disabled_by: "service",
      disabled_reason: "every attempt failed for 60 s",
      failing_since: new Date(t0).toISOString(),
    });
    const notices = await env.DB.prepare(
      "SELECT type, endpoint FROM endpoint_notices WHERE endpoint_id = ?1 ORDER BY id",
    )
      .bind(failing.id)
      .all<{ type: string; endpoint: string }>();
    expect(notices.results.map((row) => row.type)).toEqual(["webhook_endpoint.failing", "webhook_endpoint.disabled"]);
    expect(JSON.parse(notices.results[1]!.endpoint)).toMatchObject({
      status: "disabled",
      disabledReason: "disabled by the service: every attempt failed for 60 s",
    });
    expect(await noticeDeliveries(watcher.id)).toHaveLength(2);

    // Its deliveries are kept: pending until their turn, then failed as disabled; enabled again, its owner recovers
    // them.
    const dueAll = disabledAt + 86_400_000 + 1;
    await refusedRunAt(failing.id, dueAll);
    const kept = await laneDeliveries(failing.id);
    expect(kept).toHaveLength(4);
    expect(kept.map((row) => [row.outcome, row.last_error])).toEqual(
      kept.map(() => ["failed", "the endpoint is disabled"]),
    );
    expect((await patch(failing.id, { status: "enabled" })).status).toBe(200);
    expect((await endpointRow(failing.id))!.failing_since).toBeNull();
    // The recovery wakes the lane's own run, now: its receiver refuses them again before the restart takes them.
    const refused = vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response(null, { status: 503 }));
    expect((await recover(failing.id, new Date(Date.now() - 60_000))).status).toBe(202);
    await runInDurableObject(laneOf(env, failing.id), (lane: WebhookLane) => lane.running);
    expect(refused).toHaveBeenCalledTimes(4);
    refused.mockRestore();
    const restart = dueAll + 10_000;
    await runLaneOnce(failing.id, {
      fetch: receivers(() => new Response("ok")).fetch,
      now: () => restart,
      health: HEALTH,
    });
    expect((await laneDeliveries(failing.id)).map((row) => row.outcome)).toEqual(kept.map(() => "delivered"));
    // Failing again after its enabling: a new period, from then, with nothing of the old one counted.
    await failedRunAt(failing.id, restart + 1);
    await failedRunAt(failing.id, restart + 1 + HEALTH.failingAfterMs);
    expect(await endpointRow(failing.id)).toMatchObject({
      status: "enabled",
      failing_since: new Date(restart + 1).toISOString(),
    });
    expect(await noticeDeliveries(watcher.id)).toHaveLength(3);
    expect((await endpointRow(failing.id))!.status).toBe("enabled");
    // A delivery through ends the period.
    await runLaneOnce(failing.id, {
      fetch: receivers(() => new Response("ok")).fetch,
      now: () => restart + HEALTH.failingAfterMs + 1_000 + 86_400_000,
      health: HEALTH,
    });
    expect(await endpointRow(failing.id)).toMatchObject({ status: "enabled", failing_since: null });
  });

  it("enabled again and its failed deliveries recovered while its receiver still refuses: neither disabled nor told at once, a new period from the first refusal after", async () => {
    const { failing, watcher } = await budgetWithWatcher();
    const t0 = Date.now() + 1_000;
    for (const at of [0, HEALTH.disableAfterMs + 1_000, HEALTH.disableAfterMs + 2_000, HEALTH.disableAfterMs + 3_000])
      await failedRunAt(failing.id, t0 + at);
    expect((await endpointRow(failing.id))!.status).toBe("disabled");
    const dueAll = t0 + HEALTH.disableAfterMs + 3_000 + 86_400_000 + 1;
    await refusedRunAt(failing.id, dueAll);
    const told = await noticeDeliveries(watcher.id);
    const restart = dueAll + 10_000;
    try {
      // Enabled after those runs, on their clock (a busy machine's real clock could put it among them).
      vi.setSystemTime(dueAll + 1);
      expect((await patch(failing.id, { status: "enabled" })).status).toBe(200);
      // The recovery wakes the lane's own run: on the lane's clock, its receiver still refusing.
      vi.setSystemTime(restart);
      const refused = vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response(null, { status: 503 }));
      expect((await recover(failing.id, new Date(t0 - 60_000))).status).toBe(202);
      await runInDurableObject(laneOf(env, failing.id), (lane: WebhookLane) => lane.running);
      expect(refused).toHaveBeenCalledTimes(4);
      // The recovered deliveries carry their old refusals; the period they belong to closed with the enabling.
      expect(await endpointRow(failing.id)).toMatchObject({ status: "enabled", failing_since: null });
    } finally {
      vi.useRealTimers();
    }
    await failedRunAt(failing.id, restart + 1_000);
    expect(await endpointRow(failing.id)).toMatchObject({
      status: "enabled",
      failing_since: new Date(restart).toISOString(),
    });
    expect(await noticeDeliveries(watcher.id)).toHaveLength(told.length);
  });

  it("enabled again by its owner before its lane ran: the refusals before belong to the period that closed", async () => {
    const { failing } = await budgetWithWatcher();
    const t0 = Date.now() + 1_000;
    for (const at of [0, 1_000]) await failedRunAt(failing.id, t0 + at);
    expect((await endpointRow(failing.id))!.failing_since).toBe(new Date(t0).toISOString());
    // Disabled and enabled again after those runs, on their clock.
    vi.setSystemTime(t0 + 1_500);
    try {
      expect((await patch(failing.id, { status: "disabled" })).status).toBe(200);
      expect((await patch(failing.id, { status: "enabled" })).status).toBe(200);
    } finally {
      vi.useRealTimers();
    }
    // Its two pending deliveries, still on their schedules, refused again with a third.
    const again = t0 + 86_400_000 + 2_000;
    await failedRunAt(failing.id, again);
    expect((await endpointRow(failing.id))!.failing_since).toBeNull();
    await failedRunAt(failing.id, again + 1_000);
    expect((await endpointRow(failing.id))!.failing_since).toBe(new Date(again).toISOString());
  });

  it.each([
    // The recovered row's retry is due a second after the restart (the local schedule, 1,2,3).
    ["its retries pending", [86_400], 500],
    ["its one retry spent in the run that fails again", [1], 1_000],
  ] as const)(
    "recovered after one refusal and its owner's disabling, %s: the old refusal opens no period with the new ones",
    async (_, retrySeconds, next) => {
      const { failing } = await budgetWithWatcher();
      const t0 = Date.now() + 1_000;
      await failedRunAt(failing.id, t0);
      expect((await patch(failing.id, { status: "disabled" })).status).toBe(200);
      await refusedRunAt(failing.id, t0 + 1_000);
      expect((await laneDeliveries(failing.id)).map((row) => row.outcome)).toEqual(["failed"]);
      // Enabled and recovered at the restart, on the lane's clock; the recovery wakes the lane's own run, its
      // receiver still refusing.
      const restart = t0 + 30_000;
      vi.setSystemTime(restart);
      try {
        expect((await patch(failing.id, { status: "enabled" })).status).toBe(200);
        const refused = vi
          .spyOn(globalThis, "fetch")
          .mockImplementation(async () => new Response(null, { status: 503 }));
        expect((await recover(failing.id, new Date(t0 - 60_000))).status).toBe(202);
        await runInDurableObject(laneOf(env, failing.id), (lane: WebhookLane) => lane.running);
        expect(refused).toHaveBeenCalledTimes(1);
        expect((await endpointRow(failing.id))!.failing_since).toBeNull();
      } finally {
        vi.useRealTimers();
      }
      await seedOrders([{ id: nextOrder++ }]);
      await dispatchQuietly();
      await refusedRunAt(failing.id, restart + next, [...retrySeconds]);
      expect((await endpointRow(failing.id))!.failing_since).toBe(new Date(restart).toISOString());
    },
  );

  it("counts a refused delivery's attempts across its owner's retry: the period opens at the second failing run", async () => {
    const { failing } = await budgetWithWatcher();
    const t0 = Date.now() + 1_000;
    await failedRunAt(failing.id, t0);
    const [pending] = await laneDeliveries(failing.id);
    // The retry wakes the lane's own run: on the lane's clock, its receiver still refusing.
    vi.setSystemTime(t0 + 5_000);
    try {
      const refused = vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response(null, { status: 503 }));
      const retry = await apiWith(
        withoutDispatcher(),
        `/v2/webhook-endpoints/${failing.id}/deliveries/${deliveryIdOf(failing.id, pending!.seq)}/retry`,
        { method: "POST", key: owner.key },
      );
      expect(retry.status).toBe(202);
      await runInDurableObject(laneOf(env, failing.id), (lane: WebhookLane) => lane.running);
      expect(refused).toHaveBeenCalledTimes(1);
    } finally {
      vi.useRealTimers();
    }
    expect((await endpointRow(failing.id))!.failing_since).toBe(new Date(t0).toISOString());
  });

  it("counts no refusal from before its last enabling, though its lane never saw it disabled, twice with no event between", async () => {
    const { failing } = await budgetWithWatcher();
    const t0 = Date.now() + 1_000;
    await seedOrders([{ id: nextOrder++ }]);
    await dispatchQuietly();
    // One delivery, refused at each try, tried again 5 s later.
    const refusedAt = (at: number) => refusedRunAt(failing.id, at, [5, 5, 5, 5]);
    const disabledAndEnabledAt = async (at: number) => {
      vi.setSystemTime(at);
      try {
        expect((await patch(failing.id, { status: "disabled" })).status).toBe(200);
        expect((await patch(failing.id, { status: "enabled" })).status).toBe(200);
      } finally {
        vi.useRealTimers();
      }
    };
    expect(await refusedAt(t0)).toMatchObject({ sent: 1 });
    await disabledAndEnabledAt(t0 + 2_000);
    expect(await refusedAt(t0 + 6_000)).toMatchObject({ sent: 1 });
    expect((await endpointRow(failing.id))!.failing_since).toBeNull();
    await disabledAndEnabledAt(t0 + 8_000);
    expect(await refusedAt(t0 + 12_000)).toMatchObject({ sent: 1 });
    expect((await endpointRow(failing.id))!.failing_since).toBeNull();
    expect(await refusedAt(t0 + 18_000)).toMatchObject({ sent: 1 });
    expect((await endpointRow(failing.id))!.failing_since).toBe(new Date(t0 + 12_000).toISOString());
  });

  it("notes no period from before an enabling that landed after its lane read the endpoint; the next run opens it from the enabling", async () => {
    const { failing } = await budgetWithWatcher();
    const t0 = Date.now() + 1_000;
    await failedRunAt(failing.id, t0);
    // The owner's disabling and enabling land just after the second run read its endpoint, before it notes the run.
    const enabledMeanwhile = interceptD1({
      prepare: (statement, sql) =>
        sql.startsWith("SELECT id, budget, url, status")
          ? afterRead(statement, () =>
              env.DB.prepare("UPDATE webhook_endpoints SET enabled_at = ?2 WHERE id = ?1")
                .bind(failing.id, new Date(t0 + 10_000).toISOString())
                .run(),
            )
          : statement,
    });
    await seedOrders([{ id: nextOrder++ }]);
    await dispatchQuietly();
    await runLaneOnce(failing.id, {
      fetch: refusing().fetch,
      now: () => t0 + 10_000,
      retrySeconds: [86_400],
      health: HEALTH,
      db: enabledMeanwhile,
    });
    expect((await endpointRow(failing.id))!.failing_since).toBeNull();
    // Refused at the enabling: the next failing run opens the period from that refusal.
    await failedRunAt(failing.id, t0 + 20_000);
    expect((await endpointRow(failing.id))!.failing_since).toBe(new Date(t0 + 10_000).toISOString());
  });

  it("counts a refusal made after a success in the same run: the period opens at the next failing run", async () => {
    const { failing } = await budgetWithWatcher();
    const t0 = Date.now() + 1_000;
    await seedOrders([{ id: nextOrder++ }, { id: nextOrder++ }]);
    await dispatchQuietly();
    // The first POST is taken, the second refused a moment later: the receiver went down mid-run.
    const { fetch, posts } = receivers(() => new Response(null, { status: posts.length === 1 ? 200 : 503 }));
    let clock = t0;
    expect(
      await runLaneOnce(failing.id, { fetch, now: () => clock++, retrySeconds: [86_400], health: HEALTH }),
    ).toMatchObject({ sent: 2, delivered: 1 });
    const [refused] = (await laneDeliveries(failing.id)).filter((row) => row.outcome === "pending");
    await failedRunAt(failing.id, t0 + 10_000);
    expect((await endpointRow(failing.id))!.failing_since).toBe(new Date(refused!.attempt_log[0]![0]).toISOString());
  });

  it("opens a period when a delivery spends a one-retry schedule in the run that fails again", async () => {
    const { failing } = await budgetWithWatcher();
    const t0 = Date.now() + 1_000;
    await seedOrders([{ id: nextOrder++ }]);
    await dispatchQuietly();
    const refusedAt = (at: number) => refusedRunAt(failing.id, at, [1]);
    await refusedAt(t0);
    expect((await endpointRow(failing.id))!.failing_since).toBeNull();
    await refusedAt(t0 + 1_000);
    expect((await laneDeliveries(failing.id)).map((row) => [row.outcome, row.attempts])).toEqual([["failed", 2]]);
    expect((await endpointRow(failing.id))!.failing_since).toBe(new Date(t0).toISOString());
  });

  it("stays enabled while a delivery gets through now and then, whatever the others do", async () => {
    const { failing } = await budgetWithWatcher();
    const t0 = Date.now() + 1_000;
    // Three refused for each one taken, for twice WEBHOOK_DISABLE_AFTER.
    for (let at = 0; at <= 2 * HEALTH.disableAfterMs; at += 5_000) {
      const takes = at % 20_000 === 0;
      await failedRunAt(failing.id, t0 + at, quietLanes, takes ? receivers(() => new Response("ok")).fetch : undefined);
    }
    expect((await endpointRow(failing.id))!.status).toBe("enabled");
  });

  it("hands a notice to every recipient once, though a recipient's lane failed: the others at once, that one at a run 30 s later", async () => {
    const { failing, watcher } = await budgetWithWatcher();
    const second = await makeEndpoint(owner.key, { url: "https://second-pager.example/hooks", types: NOTICES });
    const t0 = Date.now() + 1_000;
    await failedRunAt(failing.id, t0);
    const handed: string[] = [];
    let refused = 0;
    const flaky: HandToLane = (endpointId, seqs) => {
      handed.push(endpointId);
      if (endpointId === second.id && refused++ === 0) return Promise.reject(new Error("the lane did not answer"));
      return quietLanes(endpointId, seqs);
    };
    const told = t0 + HEALTH.failingAfterMs;
    // The run is noted and the watcher told; the unreachable lane is owed the notice, and the lane runs again for it.
    expect(await failedRunAt(failing.id, told, flaky)).toMatchObject({ next: told + OWED_NOTICE_RETRY_MS });
    expect(await noticeDeliveries(second.id)).toEqual([]);
    expect(await noticeDeliveries(watcher.id)).toHaveLength(1);
    // That run, with nothing due, hands it to the one that lacks it, and to no other again.
    const retried = await runLaneOnce(failing.id, {
      fetch: refusing().fetch,
      now: () => told + OWED_NOTICE_RETRY_MS,
      health: HEALTH,
      handToLane: flaky,
      retrySeconds: [86_400],
    });
    expect(retried).toMatchObject({ sent: 0 });
    expect((retried as { next: number }).next).toBeGreaterThan(told + OWED_NOTICE_RETRY_MS);
    expect(handed.sort()).toEqual([second.id, second.id, watcher.id].sort());
    expect(await noticeDeliveries(second.id)).toHaveLength(1);
    expect(await noticeDeliveries(watcher.id)).toHaveLength(1);
    expect(
      await env.DB.prepare("SELECT count(*) AS n FROM endpoint_notices WHERE endpoint_id = ?1")
        .bind(failing.id)
        .first("n"),
    ).toBe(1);
  });

  it("owes a notice once and hands it once, though its making failed at first (D1 down a moment)", async () => {
    const { failing, watcher } = await budgetWithWatcher();
    const t0 = Date.now() + 1_000;
    await failedRunAt(failing.id, t0);
    let noticeAsked = false;
    let down = true;
    const noticeDown = interceptD1({
      prepare: (statement, sql) => {
        noticeAsked ||= sql.startsWith("INSERT OR IGNORE INTO endpoint_notices");
        return statement;
      },
      batch: (real, statements) =>
        noticeAsked && down ? Promise.reject(new Error("D1_ERROR: Network connection lost.")) : real(statements),
    });
    const handed: string[] = [];
    const counting: HandToLane = (endpointId, seqs) => {
      handed.push(endpointId);
      return quietLanes(endpointId, seqs);
    };
    const told = t0 + HEALTH.failingAfterMs;
    const runAt = async (at: number) => {
      await seedOrders([{ id: nextOrder++ }]);
      await dispatchQuietly();
      return runLaneOnce(failing.id, {
        fetch: refusing().fetch,
        now: () => at,
        retrySeconds: [86_400],
        health: HEALTH,
        handToLane: counting,
        db: noticeDown,
      });
    };
    await expect(runAt(told)).rejects.toThrow("Network connection lost");
    down = false;
    await runAt(told + 1_000);
    expect(handed).toEqual([watcher.id]);
    expect(await noticeDeliveries(watcher.id)).toHaveLength(1);
    expect(await runInDurableObject(laneOf(env, failing.id), (_, state) => state.storage.kv.get("owedNotices"))).toBe(
      undefined,
    );
  });

  it("is never disabled once a delivery got through, though the health write of that run failed (D1 down a moment)", async () => {
    const { failing, t0, healthDown } = await failingWithHealthWritesDown();
    await seedOrders([{ id: nextOrder++ }]);
    await dispatchQuietly();
    const through = t0 + HEALTH.disableAfterMs / 2;
    await runLaneOnce(failing.id, {
      fetch: receivers(() => new Response("ok")).fetch,
      now: () => through,
      retrySeconds: [86_400],
      health: HEALTH,
      db: healthDown,
    });
    expect((await endpointRow(failing.id))!.failing_since).toBe(new Date(t0).toISOString());
    // Failing from just after it, past WEBHOOK_DISABLE_AFTER from the first failure: a new period, not the old one.
    for (const at of [1, 2, 3]) await failedRunAt(failing.id, t0 + HEALTH.disableAfterMs + at * 1_000);
    expect(await endpointRow(failing.id)).toMatchObject({
      status: "enabled",
      failing_since: new Date(t0 + HEALTH.disableAfterMs + 1_000).toISOString(),
    });
  });

  it("is not disabled for a period its retries ended, though that health write failed and the log of them was pruned", async () => {
    const { failing, t0, healthDown } = await failingWithHealthWritesDown();
    // A day on, both retries get through, and the row does not hear of it.
    const retried = t0 + 86_400_000 + 2_000;
    const { fetch, posts } = receivers();
    await runLaneOnce(failing.id, {
      fetch,
      now: () => retried,
      retrySeconds: [86_400],
      health: HEALTH,
      db: healthDown,
    });
    expect([posts.length, (await endpointRow(failing.id))!.failing_since]).toEqual([2, new Date(t0).toISOString()]);
    // Quiet for longer than the lane keeps its log, then failing again: a new period, not the old one.
    const back = retried + DELIVERY_LOG_MS + 60_000;
    for (const at of [0, 1, 2]) await failedRunAt(failing.id, back + at * 1_000);
    expect(await endpointRow(failing.id)).toMatchObject({
      status: "enabled",
      failing_since: new Date(back).toISOString(),
    });
  });

  it("is not disabled when its owner disabled and enabled it again while its lane judged it", async () => {
    const { failing, watcher } = await budgetWithWatcher();
    const t0 = Date.now() + 1_000;
    for (const at of [0, HEALTH.disableAfterMs - 2_000, HEALTH.disableAfterMs - 1_000])
      await failedRunAt(failing.id, t0 + at);
    // The owner's disabling and enabling land just after the lane read the endpoint and its period, before it acts.
    const enabledMeanwhile = interceptD1({
      prepare: (statement, sql) =>
        sql.startsWith("SELECT id, budget, url, status")
          ? afterRead(statement, () =>
              env.DB.prepare("UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ?1").bind(failing.id).run(),
            )
          : statement,
    });
    await seedOrders([{ id: nextOrder++ }]);
    await dispatchQuietly();
    await runLaneOnce(failing.id, {
      fetch: refusing().fetch,
      now: () => t0 + HEALTH.disableAfterMs,
      retrySeconds: [86_400],
      health: HEALTH,
      db: enabledMeanwhile,
    });
    expect((await endpointRow(failing.id))!.status).toBe("enabled");
    expect(await noticeDeliveries(watcher.id)).toHaveLength(1);
  });

  it("counts each recent failed attempt once, though a delivery made pending again carries its settled attempts", async () => {
    const now = Date.now();
    const counted = await runInDurableObject(laneOf(env, "we_00000000000000000077"), (_, state) => {
      const { sql } = state.storage;
      const failed = {
        seq: 7,
        outcome: "failed" as const,
        attempts: 2,
        lastStatus: 503,
        lastError: "the receiver answered 503",
        createdAt: now - 2_000,
        settledAt: now - 1_000,
        attemptLog: [
          [now - 2_000, 503, 5, null, null],
          [now - 1_000, 503, 5, null, null],
        ] as [number, number, number, null, null][],
      };
      appendSettled(sql, [failed]);
      const settledOnly = recentFailures(sql, now - 10_000);
      // Recovered: its row carries the two attempts, and its settled entry still holds them.
      addRetried(sql, 7, failed, failed.createdAt, now);
      return [settledOnly, recentFailures(sql, now - 10_000)];
    });
    expect(counted).toEqual([2, 2]);
  });

  it("lists a lane's notices among its newest deliveries however many order events it holds, and lines them up first in a fifo lane, oldest first", async () => {
    const { watcher } = await budgetWithWatcher();
    const now = Date.now();
    const { listed, head, due } = await runInDurableObject(laneOf(env, watcher.id), (_, state) => {
      const insert = (seq: number, at: number) =>
        state.storage.sql.exec(
          "INSERT INTO pending_deliveries (seq, due_at, created_at, updated_at) VALUES (?, ?, ?, ?)",
          seq,
          at,
          at,
          at,
        );
      for (let seq = 1; seq <= 150; seq++) insert(seq, now - 60_000 + seq);
      insert(-7, now - 1_000);
      insert(-9, now);
      return {
        listed: newestDeliveries(state.storage.sql, 100).map((row) => row.seq),
        head: headOfLine(state.storage.sql)!.seq,
        due: dueInOrder(state.storage.sql, now, 4, []).map((row) => row.seq),
      };
    });
    expect(listed.slice(0, 3)).toEqual([-9, -7, 150]);
    expect(listed).toHaveLength(100);
    expect(head).toBe(-7);
    expect(due).toEqual([-7, -9, 1, 2]);
    expect([behindInLine(-9, -7), behindInLine(1, -7), behindInLine(-7, 1), behindInLine(2, 1)]).toEqual([
      true,
      true,
      false,
      true,
    ]);
  });

  it("is not told of, nor disabled, when its owner disabled it meanwhile", async () => {
    const { failing, watcher, t0 } = await failingToTheEdgeOfDisabling();
    // Disabled by its owner between two attempts: the service's disabling and its notice give way.
    await seedOrders([{ id: nextOrder++ }]);
    await dispatchQuietly();
    expect((await patch(failing.id, { status: "disabled" })).status).toBe(200);
    await refusedRunAt(failing.id, t0 + HEALTH.disableAfterMs);
    expect(await endpointRow(failing.id)).toMatchObject({ status: "disabled", disabled_by: "owner" });
    expect(await noticeDeliveries(watcher.id)).toHaveLength(1);
  });

  it("is not disabled by the service, nor told of, when its owner disabled it while its last attempt was in flight", async () => {
    const { failing, watcher, t0 } = await failingToTheEdgeOfDisabling();
    // The run that reaches the verdict: its attempt is refused after the owner disabled the endpoint, so the run has
    // sent, and judges the period, with the endpoint no longer enabled.
    const { fetch, posts } = receivers(async () => {
      expect((await patch(failing.id, { status: "disabled" })).status).toBe(200);
      return new Response("down", { status: 503 });
    });
    await failedRunAt(failing.id, t0 + HEALTH.disableAfterMs, quietLanes, fetch);
    expect(posts).toHaveLength(1);
    expect(await endpointRow(failing.id)).toMatchObject({ status: "disabled", disabled_by: "owner" });
    expect(await noticeDeliveries(watcher.id)).toHaveLength(1);
  });
});

describe("notices kept", () => {
  it("keep a failing notice while its period lasts, past NOTICE_RETENTION_MS: it is the mark that its owner was told", async () => {
    const { failing, watcher } = await budgetWithWatcher();
    const t0 = Date.now() + 1_000;
    const later = t0 + NOTICE_RETENTION_MS + 60_000;
    // One new event a run; its retry not due before the last run, so no run judges more attempts than its own.
    const runAt = async (at: number, fetch = refusing().fetch) => {
      await seedOrders([{ id: nextOrder++ }]);
      await dispatchQuietly();
      await runLaneOnce(failing.id, { fetch, now: () => at, retrySeconds: [60 * 86_400], health: HEALTH });
    };
    const kept = () =>
      env.DB.prepare("SELECT count(*) AS n FROM endpoint_notices WHERE endpoint_id = ?1").bind(failing.id).first("n");
    for (const at of [t0, t0 + 1_000, t0 + HEALTH.failingAfterMs]) await runAt(at);
    expect(await noticeDeliveries(watcher.id)).toHaveLength(1);
    await pruneNotices(env.DB, later);
    expect(await kept()).toBe(1);
    // A month on, still failing, with too few recent failures to disable it: not told again.
    await runAt(later);
    expect(await endpointRow(failing.id)).toMatchObject({
      status: "enabled",
      failing_since: new Date(t0).toISOString(),
    });
    expect(await noticeDeliveries(watcher.id)).toHaveLength(1);
    // Its period over, the notice goes with the rest.
    await runAt(later + 1_000, receivers().fetch);
    await pruneNotices(env.DB, later + 2_000);
    expect(await kept()).toBe(0);
  });

  it("cost D1 no more than NOTICE_ROW_BYTES each, indexes included, and go after NOTICE_RETENTION_MS", async () => {
    const ROWS = 5_000;
    const endpointJson = JSON.stringify({
      id: "we_0123456789abcdef0123",
      url: `https://${"receiver".repeat(6)}.example.com/hooks/orders`,
      status: "disabled",
      failingSince: "2026-11-28T09:00:00.000Z",
      lastDeliveredAt: "2026-11-23T09:00:00.000Z",
      disabledReason: "disabled by the service: every attempt failed for 5 days",
    });
    await env.DB.prepare("DELETE FROM endpoint_notices").run();
    const before = (await env.DB.prepare("SELECT 1").run()).meta.size_after;
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS})
       INSERT INTO endpoint_notices (budget, endpoint_id, type, period_from, created_at, endpoint)
       SELECT 'bud_0123456789abcdef', printf('we_%020d', i), 'webhook_endpoint.disabled',
         strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || i || ' minutes'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), ?1
       FROM n`,
    )
      .bind(endpointJson)
      .run();
    const after = (await env.DB.prepare("SELECT 1").run()).meta.size_after;
    const perNotice = (after - before) / ROWS;
    console.log(`bytes per notice: ${perNotice.toFixed(1)}`);
    expect(perNotice).toBeLessThanOrEqual(NOTICE_ROW_BYTES);
    expect(perNotice).toBeGreaterThan(NOTICE_ROW_BYTES * 0.6);
    // A minute short of the retention: none goes.
    expect(await pruneNotices(env.DB, Date.now() + NOTICE_RETENTION_MS - 60_000)).toBe(0);
    // All of them older than the retention a month on: pruned a batch a run.
    const later = Date.now() + NOTICE_RETENTION_MS + 60_000;
    expect(await pruneNotices(env.DB, later)).toBe(1_000);
    while ((await pruneNotices(env.DB, later)) > 0);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM endpoint_notices").first("n")).toBe(0);
  });
});
