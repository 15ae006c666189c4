import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { deliveryIdOf, laneOf } from "../../../src/webhook-delivery/lane-calls";
import type { WebhookLane } from "../../../src/webhook-delivery/lane-object";
import { pendingCount } from "../../../src/webhook-delivery/lane-deliveries";
import { api } from "../../support/request";
import { seedOrders } from "../../support/seed";
import {
  dispatchQuietly,
  laneDeliveries,
  makeEndpoint,
  receivers,
  replaying,
  runLaneOnce,
  webhookOwnerOfEachTest,
} from "../../support/webhook-fixtures";

/**
 * Ordered endpoints (docs/api.md#webhook-endpoints): a fifo endpoint receives one delivery at a time, in event order;
 * a failing one holds the later ones behind it until it is delivered or given up, and its owner sees which.
 */
const owner = webhookOwnerOfEachTest();

/** Runs the lane as its alarm would, its clock moved to each run's `next`, until nothing is pending. */
async function runUntilSettled(endpointId: string, fetch: typeof globalThis.fetch) {
  let now = Date.now();
  for (let run = 0; run < 50; run++) {
    const result = await runLaneOnce(endpointId, { fetch, now: () => now });
    if (result === "endpoint gone" || result.next === null) return;
    now = Math.max(now, result.next);
  }
  throw new Error("the lane never settled");
}

const deliveriesOf = async (key: string, endpointId: string) =>
  (
    await (
      await api(`/v2/webhook-endpoints/${endpointId}/deliveries`, { key })
    ).json<{
      data: { eventId: string; outcome: string; heldBehind: string | null }[];
    }>()
  ).data;

describe("a fifo endpoint", () => {
  it("gets every event once and in order from a receiver that fails one event's first three attempts", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks", ordering: "fifo" });
    await seedOrders([81, 82, 83, 84, 85, 86].map((id) => ({ id })));
    await dispatchQuietly();
    const seqs = (await laneDeliveries(made.id)).map((row) => row.seq);
    const failing = `evt_${seqs[2]}`;
    let refused = 0;
    let inFlight = 0;
    let most = 0;
    const { fetch, posts } = receivers(async (_url, _signal) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      await scheduler.wait(1);
      inFlight -= 1;
      const last = posts.at(-1)!;
      if (last.webhookId === failing && refused < 3) {
        refused += 1;
        return new Response(null, { status: 503 });
      }
      return new Response(null, { status: 204 });
    });
    await runUntilSettled(made.id, fetch);
    const ids = posts.map((post) => post.webhookId);
    // Every event once and in order, but the failing one four times, and never anything after it before it went
    // through.
    expect(ids.filter((id) => id !== failing)).toEqual(seqs.map((seq) => `evt_${seq}`).filter((id) => id !== failing));
    expect([...new Set(ids)]).toEqual(seqs.map((seq) => `evt_${seq}`));
    expect(ids.filter((id) => id === failing)).toHaveLength(4);
    expect(ids.slice(ids.indexOf(failing), ids.lastIndexOf(failing) + 1).every((id) => id === failing)).toBe(true);
    expect(most).toBe(1);
    expect((await laneDeliveries(made.id)).every((row) => row.outcome === "delivered")).toBe(true);
  });

  it("shows the owner the deliveries held behind the failing one, which alone has a row", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks", ordering: "fifo" });
    await seedOrders(Array.from({ length: 21 }, (_, index) => ({ id: 91 + index })));
    await dispatchQuietly();
    const { fetch, posts } = receivers(() => new Response(null, { status: 500 }));
    await runLaneOnce(made.id, { fetch });
    const seqs = (await laneDeliveries(made.id)).map((row) => row.seq);
    expect(posts).toHaveLength(1);
    const log = await deliveriesOf(owner.key, made.id);
    expect(log.map((row) => [row.eventId, row.heldBehind])).toEqual(
      [...seqs].reverse().map((seq) => [`evt_${seq}`, seq === seqs[0] ? null : `evt_${seqs[0]}`]),
    );
    // The 20 behind wait in the feed, after the cursor: only the head was written.
    expect(await runInDurableObject(laneOf(env, made.id), (_, state) => pendingCount(state.storage.sql))).toBe(1);
  });

  it("is chosen on creation or with PATCH; a concurrent endpoint sends past a failing delivery", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    expect(made).toMatchObject({ ordering: "concurrent" });
    await seedOrders([95, 96].map((id) => ({ id })));
    await dispatchQuietly();
    const seqs = (await laneDeliveries(made.id)).map((row) => row.seq);
    const { fetch, posts } = receivers((_url) =>
      posts.at(-1)!.webhookId === `evt_${seqs[0]}` ? new Response(null, { status: 500 }) : new Response("ok"),
    );
    await runLaneOnce(made.id, { fetch });
    expect(new Set(posts.map((post) => post.webhookId))).toEqual(new Set(seqs.map((seq) => `evt_${seq}`)));
    const changed = await api(`/v2/webhook-endpoints/${made.id}`, {
      method: "PATCH",
      key: owner.key,
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ ordering: "fifo" }),
    });
    expect(await changed.json()).toMatchObject({ ordering: "fifo" });
  });
});

describe("an owner's retry in a fifo line", () => {
  it("of an event not tried yet keeps the line's order: it goes in its turn", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks", ordering: "fifo" });
    await seedOrders([61, 62, 63, 64, 65].map((id) => ({ id })));
    await dispatchQuietly();
    const seqs = (await laneDeliveries(made.id)).map((row) => row.seq);
    const posted = vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("ok"));
    const path = `/v2/webhook-endpoints/${made.id}/deliveries/${deliveryIdOf(made.id, seqs.at(-1)!)}/retry`;
    expect((await api(path, { method: "POST", key: owner.key })).status).toBe(202);
    // The retry woke the lane, which sends the line in order.
    await runInDurableObject(laneOf(env, made.id), (lane: WebhookLane) => lane.running);
    const sent = posted.mock.calls.map(([, init]) => new Headers(init?.headers).get("webhook-id"));
    expect(sent).toEqual(seqs.map((seq) => `evt_${seq}`));
  });
});

describe("a recovered range in a fifo line", () => {
  it("goes first, oldest first, one at a time; one of its events refused holds the rest and the feed behind it", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks", ordering: "fifo" });
    await seedOrders([66, 67, 68].map((id) => ({ id })));
    while ((await dispatchQuietly()).more);
    const recovered = (await laneDeliveries(made.id)).map((row) => row.seq);
    await replaying(made.id, recovered[0]!, recovered.at(-1)!);
    await seedOrders([69, 70].map((id) => ({ id })));
    while ((await dispatchQuietly()).more);
    const seqs = (await laneDeliveries(made.id)).map((row) => row.seq);
    const refused = `evt_${recovered[1]}`;
    let inFlight = 0;
    let most = 0;
    const { fetch, posts } = receivers(async () => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      await scheduler.wait(1);
      inFlight -= 1;
      const tries = posts.filter((post) => post.webhookId === refused).length;
      return new Response(null, { status: posts.at(-1)!.webhookId === refused && tries === 1 ? 503 : 204 });
    });
    await runLaneOnce(made.id, { fetch });
    // Held behind the refused one: nothing after it went.
    expect(posts.map((post) => post.webhookId)).toEqual([`evt_${recovered[0]}`, refused]);
    await runUntilSettled(made.id, fetch);
    expect(posts.map((post) => post.webhookId)).toEqual([
      `evt_${recovered[0]}`,
      refused,
      ...seqs.slice(1).map((seq) => `evt_${seq}`),
    ]);
    expect(most).toBe(1);
    expect((await laneDeliveries(made.id)).map((row) => row.outcome)).toEqual(seqs.map(() => "delivered"));
  });

  it("holds an owner's retry of one of its events to its turn: each sent once, in order", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks", ordering: "fifo" });
    await seedOrders([51, 52, 53].map((id) => ({ id })));
    while ((await dispatchQuietly()).more);
    const seqs = (await laneDeliveries(made.id)).map((row) => row.seq);
    await replaying(made.id, seqs[0]!, seqs.at(-1)!);
    const posted = vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response("ok"));
    try {
      const path = `/v2/webhook-endpoints/${made.id}/deliveries/${deliveryIdOf(made.id, seqs[1]!)}/retry`;
      expect((await api(path, { method: "POST", key: owner.key })).status).toBe(202);
      await runInDurableObject(laneOf(env, made.id), (lane: WebhookLane) => lane.running);
      const sent = posted.mock.calls.map(([, init]) => new Headers(init?.headers).get("webhook-id"));
      expect(sent).toEqual(seqs.map((seq) => `evt_${seq}`));
    } finally {
      posted.mockRestore();
    }
  });

  it("shows its owner the line held behind the replay's next event, the feed's events too", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks", ordering: "fifo" });
    await seedOrders([56, 57].map((id) => ({ id })));
    while ((await dispatchQuietly()).more);
    const recovered = (await laneDeliveries(made.id)).map((row) => row.seq);
    await replaying(made.id, recovered[0]!, recovered.at(-1)!);
    await seedOrders([58].map((id) => ({ id })));
    while ((await dispatchQuietly()).more);
    const seqs = (await laneDeliveries(made.id)).map((row) => row.seq);
    const log = await deliveriesOf(owner.key, made.id);
    expect(log.map((row) => [row.eventId, row.heldBehind])).toEqual([
      [`evt_${seqs[2]}`, `evt_${seqs[0]}`],
      [`evt_${seqs[1]}`, `evt_${seqs[0]}`],
      [`evt_${seqs[0]}`, null],
    ]);
  });
});
