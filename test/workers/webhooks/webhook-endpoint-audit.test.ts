import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { apiWith, errorBodyOf } from "../../support/request";
import {
  makeEndpoint,
  pendingDeliveries,
  webhookOwnerOfEachTest,
  withoutDispatcher,
} from "../../support/webhook-fixtures";

/**
 * Every owner's action on an endpoint is audited (docs/api.md#webhook-endpoints),
 * as key operations are: made, tested, a delivery retried, deleted, with the
 * key that asked; an action refused leaves no row.
 */
const owner = webhookOwnerOfEachTest();
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const auditOf = async (id: string) =>
  (
    await env.DB.prepare(
      "SELECT operation, changes, actor, outcome FROM webhook_endpoint_events WHERE endpoint_id = ?1 ORDER BY id",
    )
      .bind(id)
      .all<{ operation: string; changes: string; actor: string; outcome: string | null }>()
  ).results.map((row) => ({ ...row, changes: JSON.parse(row.changes) as Record<string, unknown> }));
const post = (path: string) => apiWith(withoutDispatcher(), path, { method: "POST", key: owner.key });

describe("the audit of an owner's actions on an endpoint", () => {
  it("records the making, a test event, a retry and the deletion, each with the key that asked", async () => {
    vi.spyOn(globalThis, "fetch").mockResolvedValue(new Response("ok", { status: 200 }));
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [9_101]);
    const deliveryIds = seqs.map((seq) => `wd_${endpointId.slice(3)}_${seq}`);
    const tested = await (await post(`/v2/webhook-endpoints/${endpointId}/test`)).json<{
      id: string;
      delivered: boolean;
    }>();
    expect(tested.delivered).toBe(true);
    expect((await post(`/v2/webhook-endpoints/${endpointId}/deliveries/${deliveryIds[0]}/retry`)).status).toBe(202);
    expect(
      (await apiWith(withoutDispatcher(), `/v2/webhook-endpoints/${endpointId}`, { method: "DELETE", key: owner.key }))
        .status,
    ).toBe(204);
    const actor = `key:${owner.record.id}`;
    expect(await auditOf(endpointId)).toEqual([
      {
        operation: "create",
        changes: { url: "https://receiver.example/hooks", types: expect.stringContaining("order.cancelled") },
        actor,
        outcome: null,
      },
      { operation: "test", changes: { count: 1, last: { testEventId: tested.id } }, actor, outcome: null },
      { operation: "retry", changes: { count: 1, last: { deliveryId: deliveryIds[0] } }, actor, outcome: null },
      { operation: "delete", changes: {}, actor, outcome: null },
    ]);
    // Every row carries the endpoint's account: its page reads them by an index.
    const budgets = await env.DB.prepare("SELECT DISTINCT budget FROM webhook_endpoint_events WHERE endpoint_id = ?1")
      .bind(endpointId)
      .all<{ budget: string }>();
    expect(budgets.results).toEqual([{ budget: owner.record.id }]);
  });

  it("counts retries and test events an hour a row, per endpoint and key, the last one's changes kept", async () => {
    // Mid-hour, so no hour ends among them.
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.UTC(2030, 7, 1, 10, 30, 0));
    vi.spyOn(globalThis, "fetch").mockResolvedValue(new Response("ok", { status: 200 }));
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [9_102]);
    const deliveryId = `wd_${endpointId.slice(3)}_${seqs[0]}`;
    for (let i = 0; i < 4; i++)
      expect((await post(`/v2/webhook-endpoints/${endpointId}/deliveries/${deliveryId}/retry`)).status).toBe(202);
    const tests: string[] = [];
    for (let i = 0; i < 3; i++)
      tests.push((await (await post(`/v2/webhook-endpoints/${endpointId}/test`)).json<{ id: string }>()).id);
    const rows = (await auditOf(endpointId)).filter((row) => row.operation !== "create");
    expect(rows).toEqual([
      {
        operation: "retry",
        changes: { count: 4, last: { deliveryId } },
        actor: `key:${owner.record.id}`,
        outcome: null,
      },
      {
        operation: "test",
        changes: { count: 3, last: { testEventId: tests[2] } },
        actor: `key:${owner.record.id}`,
        outcome: null,
      },
    ]);
  });

  it("keeps no row of an action refused: an 11th endpoint, a retry of no delivery, a test of a disabled endpoint", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/first" });
    for (let i = 2; i <= 10; i++) await makeEndpoint(owner.key, { url: `https://receiver.example/${i}` });
    const eleventh = await apiWith(withoutDispatcher(), "/v2/webhook-endpoints", {
      method: "POST",
      key: owner.key,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ url: "https://receiver.example/11" }),
    });
    expect((await errorBodyOf(eleventh)).code).toBe("too_many_webhook_endpoints");
    const ghost = `wd_${made.id.slice(3)}_999999`;
    expect((await errorBodyOf(await post(`/v2/webhook-endpoints/${made.id}/deliveries/${ghost}/retry`))).code).toBe(
      "webhook_delivery_not_found",
    );
    await apiWith(withoutDispatcher(), `/v2/webhook-endpoints/${made.id}`, {
      method: "PATCH",
      key: owner.key,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ status: "disabled" }),
    });
    expect((await errorBodyOf(await post(`/v2/webhook-endpoints/${made.id}/test`))).code).toBe(
      "webhook_endpoint_disabled",
    );
    expect((await auditOf(made.id)).map(({ operation }) => operation)).toEqual(["create", "update"]);
    const rows = await env.DB.prepare(
      "SELECT count(*) AS n FROM webhook_endpoint_events WHERE operation = 'create' AND changes LIKE " +
        "'%receiver.example/11%'",
    ).first<number>("n");
    expect(rows).toBe(0);
  });
});
