import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { deliverOne } from "../../../src/webhooks/delivery-attempt";
import { pruneWebhookDeliveries } from "../../../src/webhooks/prune-webhook-deliveries";
import { EVENT_RETENTION_MS } from "../../../src/events/prune-order-events";
import { api } from "../../support/request";
import { consumerContext, pendingDeliveries, receivers, webhookOwnerOfEachTest } from "../../support/webhook-fixtures";

/**
 * Each attempt of a delivery, as its endpoint's owner reads it in the
 * deliveries list (docs/api.md#webhook-endpoints): when, the status, how long,
 * the start of the answer or what went wrong; newest first.
 */
const owner = webhookOwnerOfEachTest();

interface Listed {
  data: { id: string; attempts: number; attemptLog: { at: string; status: number | null; durationMs: number; response: string | null; error: string | null }[] }[];
}

const listed = async (endpointId: string) => (await (await api(`/v2/webhook-endpoints/${endpointId}/deliveries`, { key: owner.key })).json<Listed>()).data;

describe("a delivery's attempt log", () => {
  it("shows every attempt newest first: a refusal with the start of its answer, a failure to connect, the success", async () => {
    const { endpointId, deliveryIds } = await pendingDeliveries(owner.key, [1]);
    const answers = [() => new Response("x".repeat(1_000) + " the end", { status: 500 }), () => Promise.reject(new TypeError("Network connection lost.")), () => new Response("ok")];
    const { fetch } = receivers(() => answers.shift()!());
    for (let attempt = 1; attempt <= 3; attempt++) await deliverOne({ body: { deliveryId: deliveryIds[0]! }, attempts: attempt }, consumerContext({ fetch }));

    const [delivery] = await listed(endpointId);
    expect(delivery!.attempts).toBe(3);
    expect(delivery!.attemptLog).toEqual([
      { at: expect.any(String), status: 200, durationMs: expect.any(Number), response: "ok", error: null },
      { at: expect.any(String), status: null, durationMs: expect.any(Number), response: null, error: "could not connect" },
      { at: expect.any(String), status: 500, durationMs: expect.any(Number), response: "x".repeat(256), error: null },
    ]);
  });

  it("shows a POST the fast lane gave up on, which the schedule does not count", async () => {
    const { endpointId, deliveryIds } = await pendingDeliveries(owner.key, [2]);
    const { fetch } = receivers(() => Promise.reject(Object.assign(new Error("timed out"), { name: "TimeoutError" })));
    expect(await deliverOne({ body: { deliveryId: deliveryIds[0]! }, attempts: 1 }, { ...consumerContext({ fetch }), fastLane: true })).toBe("slow");
    const [delivery] = await listed(endpointId);
    expect(delivery).toMatchObject({ attempts: 0, attemptLog: [{ status: null, error: "no answer within 2 s: sent again with 10 s to answer" }] });
  });

  it("is pruned with the deliveries: attempts past the retention, and a deleted endpoint's", async () => {
    const kept = await pendingDeliveries(owner.key, [3]);
    const { fetch } = receivers(() => new Response(null, { status: 503 }));
    await deliverOne({ body: { deliveryId: kept.deliveryIds[0]! }, attempts: 1 }, consumerContext({ fetch }));
    const old = new Date(Date.now() - EVENT_RETENTION_MS - 60_000).toISOString();
    await env.DB.prepare("INSERT INTO webhook_attempts (delivery_id, endpoint_id, at, status, duration_ms) VALUES (?1, ?2, ?3, 500, 1)").bind(kept.deliveryIds[0], kept.endpointId, old).run();
    await env.DB.prepare("INSERT INTO webhook_attempts (delivery_id, endpoint_id, at, status, duration_ms) VALUES ('wd_gone_1', 'we_00000000000000000000', ?1, 500, 1)").bind(new Date().toISOString()).run();
    await pruneWebhookDeliveries(env.DB, Date.now());
    const left = await env.DB.prepare("SELECT endpoint_id, status FROM webhook_attempts WHERE endpoint_id IN (?1, 'we_00000000000000000000')").bind(kept.endpointId).all();
    expect(left.results).toEqual([{ endpoint_id: kept.endpointId, status: 503 }]);
  });
});
