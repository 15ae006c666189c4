import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { laneOf, type DeliveryView } from "../../../src/webhook-delivery/lane-calls";
import { api } from "../../support/request";
import {
  pendingDeliveries,
  receivers,
  runLaneOnce,
  silentReceiver,
  webhookOwnerOfEachTest,
} from "../../support/webhook-fixtures";

/**
 * Each attempt of a delivery, as its endpoint's owner reads it in the
 * deliveries list (docs/api.md#webhook-endpoints): when, the status, how long,
 * the start of the answer or what went wrong; newest first. Kept by the
 * endpoint's lane, never in the orders database.
 */
const owner = webhookOwnerOfEachTest();

interface Listed {
  data: Pick<DeliveryView, "id" | "attempts" | "attemptLog">[];
}

const listed = async (endpointId: string) =>
  (await (await api(`/v2/webhook-endpoints/${endpointId}/deliveries`, { key: owner.key })).json<Listed>()).data;

describe("a delivery's attempt log", () => {
  it("shows every attempt newest first: a refusal with the start of its answer, a failure to connect, the success", async () => {
    const { endpointId } = await pendingDeliveries(owner.key, [1]);
    const answers = [
      () => new Response(`${"x".repeat(1_000)} the end`, { status: 500 }),
      () => Promise.reject(new TypeError("Network connection lost.")),
      () => new Response("ok"),
    ];
    const { fetch } = receivers(() => answers.shift()!());
    const t0 = Date.now() + 1_000;
    for (const at of [0, 1_000, 3_000]) await runLaneOnce(endpointId, { fetch, now: () => t0 + at });

    const [delivery] = await listed(endpointId);
    expect(delivery!.attempts).toBe(3);
    expect(delivery!.attemptLog).toEqual([
      {
        at: new Date(t0 + 3_000).toISOString(),
        status: 200,
        durationMs: expect.any(Number),
        response: "ok",
        error: null,
      },
      {
        at: new Date(t0 + 1_000).toISOString(),
        status: null,
        durationMs: expect.any(Number),
        response: null,
        error: "could not connect",
      },
      {
        at: new Date(t0).toISOString(),
        status: 500,
        durationMs: expect.any(Number),
        response: "x".repeat(256),
        error: null,
      },
    ]);
  });

  it("shows a POST that ran out of its time, counted against the schedule", async () => {
    const { endpointId } = await pendingDeliveries(owner.key, [2]);
    // A receiver that never answers, and the real timeout, shortened: the POST's own signal ends it.
    const { fetch } = receivers(silentReceiver);
    await runLaneOnce(endpointId, { fetch, timeoutMs: 50 });
    const [delivery] = await listed(endpointId);
    expect(delivery).toMatchObject({
      attempts: 1,
      lastError: "no answer within 0.05 s",
      attemptLog: [{ status: null, error: "no answer within 0.05 s" }],
    });
  });

  it("goes with its endpoint: a deleted endpoint's lane keeps no delivery and no attempt", async () => {
    const { endpointId } = await pendingDeliveries(owner.key, [3]);
    await runLaneOnce(endpointId, { fetch: receivers(() => new Response(null, { status: 503 })).fetch });
    expect(await api(`/v2/webhook-endpoints/${endpointId}`, { method: "DELETE", key: owner.key })).toHaveProperty(
      "status",
      204,
    );
    await expect
      .poll(() =>
        runInDurableObject(
          laneOf(env, endpointId),
          (_, state) =>
            state.storage.sql
              .exec(
                "SELECT (SELECT count(*) FROM pending_deliveries) + (SELECT coalesce(sum(settled), 0) FROM delivery_log) AS n",
              )
              .one().n,
        ),
      )
      .toBe(0);
  });
});
