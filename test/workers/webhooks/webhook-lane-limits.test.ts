import { describe, expect, it, vi } from "vitest";
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { laneOf } from "../../../src/webhook-delivery/lane-calls";
import type { WebhookLane } from "../../../src/webhook-delivery/lane-object";
import { LANE_BATCH, LANE_RUN_DELIVERIES, LANE_RUN_MS } from "../../../src/webhook-delivery/lane-run";
import { addRetried, PENDING_CAP } from "../../../src/webhook-delivery/lane-deliveries";
import { seedOrders } from "../../support/seed";
import { failingD1, interceptD1 } from "../../support/faults";
import {
  dispatchQuietly,
  feedHead,
  laneDeliveries,
  makeEndpoint,
  pendingDeliveries,
  receivers,
  runLaneOnce,
  webhookOwnerOfEachTest,
} from "../../support/webhook-fixtures";

/**
 * What bounds one run of an endpoint's lane (src/webhook-delivery/lane-run.ts), and an answer it must not follow: a
 * run ends at LANE_RUN_MS by its clock or after LANE_RUN_DELIVERIES attempts, whatever is still due, and says when
 * to run again; a receiver's redirect is its answer, never a second POST elsewhere.
 */
const owner = webhookOwnerOfEachTest();

describe("one run of a lane", () => {
  it("ends once it has run LANE_RUN_MS by its clock, the rest still due, and the next run delivers them", async () => {
    const { endpointId } = await pendingDeliveries(owner.key, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const { fetch, posts } = receivers();
    // The lane's clock moves a quarter of LANE_RUN_MS at each POST: the run stops starting new ones past it.
    let now = Date.now();
    const slowFetch = (async (url: string, init: RequestInit) => {
      now += LANE_RUN_MS / 4;
      return fetch(url, init);
    }) as typeof globalThis.fetch;
    const first = await runLaneOnce(endpointId, { fetch: slowFetch, now: () => now });
    expect(first).toMatchObject({ next: expect.any(Number) });
    const { attempted } = first as { attempted: number };
    expect(attempted).toBeGreaterThan(0);
    expect(attempted).toBeLessThan(10);
    expect((await laneDeliveries(endpointId)).filter((row) => row.outcome === "pending")).toHaveLength(10 - attempted);
    expect(await runLaneOnce(endpointId, { fetch })).toMatchObject({ delivered: 10 - attempted, next: null });
    expect(new Set(posts.map((post) => post.webhookId)).size).toBe(10);
  });

  it(`attempts at most LANE_RUN_DELIVERIES (${LANE_RUN_DELIVERIES}) in a run, and says the rest are due now`, async () => {
    const ids = Array.from({ length: LANE_RUN_DELIVERIES + 5 }, (_, i) => 1_000 + i);
    const { endpointId } = await pendingDeliveries(owner.key, ids);
    // A dispatch pass hands a lane a page of events at a time: enough passes to hand it every one.
    for (let pass = 0; (await laneDeliveries(endpointId)).length < ids.length; pass++) {
      expect(pass).toBeLessThan(20);
      await dispatchQuietly();
    }
    const { fetch } = receivers(() => new Response(null, { status: 204 }));
    const before = Date.now();
    const first = await runLaneOnce(endpointId, { fetch });
    expect(first).toMatchObject({ attempted: LANE_RUN_DELIVERIES, delivered: LANE_RUN_DELIVERIES });
    expect((first as { next: number }).next).toBeGreaterThanOrEqual(before);
    expect(await runLaneOnce(endpointId, { fetch })).toMatchObject({ attempted: 5, delivered: 5, next: null });
  });

  it("takes a receiver's redirect as its answer: not followed, not delivered, retried at the same URL", async () => {
    const { endpointId } = await pendingDeliveries(owner.key, [41]);
    const asked: { url: string; redirect: RequestInit["redirect"] }[] = [];
    const fetch = (async (url: string, init: RequestInit) => {
      asked.push({ url, redirect: init.redirect });
      return new Response(null, { status: 301, headers: { Location: "https://elsewhere.example/hooks" } });
    }) as unknown as typeof globalThis.fetch;
    await runLaneOnce(endpointId, { fetch });
    expect(asked).toEqual([{ url: "https://receiver.example/hooks", redirect: "manual" }]);
    expect((await laneDeliveries(endpointId)).map((row) => [row.outcome, row.attempts, row.last_status])).toEqual([
      ["pending", 1, 301],
    ]);
  });

  it("fails in one row the events a held fifo line owed that the feed pruned first, and sends the rest", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks", ordering: "fifo" });
    await seedOrders([{ id: 51 }]);
    await dispatchQuietly();
    let clock = Date.now();
    // The head refused: its row holds the line while three more events are handed to the lane.
    await runLaneOnce(made.id, { fetch: receivers(() => new Response(null, { status: 500 })).fetch, now: () => clock });
    await seedOrders([{ id: 52 }, { id: 53 }, { id: 54 }]);
    await dispatchQuietly();
    const [head, , pruned, last] = (await laneDeliveries(made.id)).map((row) => row.seq);
    // The feed's prune takes the oldest first, the head's own event with them.
    await env.DB.prepare("DELETE FROM order_events WHERE seq <= ?1").bind(pruned!).run();
    const { fetch, posts } = receivers();
    clock += 60_000;
    await runLaneOnce(made.id, { fetch, now: () => clock });
    expect(posts.map((post) => post.webhookId)).toEqual([`evt_${last}`]);
    expect((await laneDeliveries(made.id)).map((row) => [row.seq, row.outcome, row.last_error])).toEqual([
      [head, "failed", "the event is older than the events kept"],
      [
        pruned,
        "failed",
        // After the lane's cursor, which its head's row, refused alone in its run, left where it was.
        `the event is older than the events kept: the events after evt_${head! - 1} up to evt_${pruned} were pruned ` +
          "first",
      ],
      [last, "delivered", null],
    ]);
  });

  it("fails in one row the events a slow lane was handed that the feed pruned before it read them", async () => {
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [61, 62, 63, 64, 65, 66, 67, 68, 69, 70]);
    const handed = seqs.at(-1)!;
    // A receiver so slow the run ends at LANE_RUN_MS with events left: each went through, none has a row.
    let now = Date.now();
    const { fetch, posts } = receivers();
    const slow = (async (url: string, init: RequestInit) => {
      now += LANE_RUN_MS / 4;
      return fetch(url, init);
    }) as typeof globalThis.fetch;
    const first = await runLaneOnce(endpointId, { fetch: slow, now: () => now, handed });
    const { attempted } = first as { attempted: number };
    expect(attempted).toBeLessThan(8);
    // The feed's prune passes its cursor before its next run reads on.
    const pruned = seqs[8]!;
    await env.DB.prepare("DELETE FROM order_events WHERE seq <= ?1").bind(pruned).run();
    await runLaneOnce(endpointId, { fetch, handed, handedBefore: handed });
    expect(posts.map((post) => post.webhookId)).toEqual(
      [...seqs.slice(0, attempted), seqs[9]!].map((seq) => `evt_${seq}`),
    );
    expect((await laneDeliveries(endpointId)).slice(attempted).map((row) => [row.seq, row.last_error])).toEqual([
      [
        pruned,
        `the event is older than the events kept: the events after evt_${seqs[attempted - 1]} up to evt_${pruned} ` +
          "were pruned first",
      ],
      [seqs[9], null],
    ]);
  });

  it("keeps, from run to run of its object, what it was handed: a prune past a slow lane's cursor is a failed range", async () => {
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [71, 72, 73, 74, 75, 76, 77, 78, 79, 80]);
    const pruned = seqs[8]!;
    let posted = 0;
    // Each answer takes a quarter of a run's time; after the third, the feed's prune passes the lane's cursor.
    const slow = vi.spyOn(globalThis, "fetch").mockImplementation(async () => {
      vi.setSystemTime(Date.now() + LANE_RUN_MS / 4);
      if (++posted === 3) await env.DB.prepare("DELETE FROM order_events WHERE seq <= ?1").bind(pruned).run();
      return new Response(null, { status: 204 });
    });
    // The lane's clock is the mocked one from here on.
    vi.setSystemTime(Date.now());
    try {
      const lane = laneOf(env, endpointId);
      await lane.enqueue(endpointId, seqs.map(String));
      await runInDurableObject(lane, (instance: WebhookLane) => instance.running);
      await runInDurableObject(lane, (_, state) => state.storage.deleteAlarm());
    } finally {
      slow.mockRestore();
      vi.useRealTimers();
    }
    const rows = await laneDeliveries(endpointId);
    expect(rows.filter((row) => row.outcome === "failed").map((row) => row.seq)).toEqual([pruned]);
    expect(rows.filter((row) => row.outcome === "delivered").length).toBe(posted);
    expect(posted).toBeLessThan(seqs.length);
  });

  it("says nothing of a prune past a lane that wanted none of the events pruned", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks", types: ["order.cancelled"] });
    const { fetch, posts } = receivers();
    // Events it does not want: its lane is never woken for them, and its cursor stays where it began.
    await seedOrders([{ id: 57 }, { id: 58 }, { id: 59 }]);
    const head = await feedHead();
    await env.DB.prepare("DELETE FROM order_events WHERE seq <= ?1").bind(head).run();
    await env.DB.prepare("UPDATE orders SET status = 'cancelled' WHERE id = 59").run();
    await dispatchQuietly();
    await runLaneOnce(made.id, { fetch });
    expect(posts).toHaveLength(1);
    expect((await laneDeliveries(made.id)).map((row) => row.outcome)).toEqual(["delivered"]);
  });

  it("says nothing of that prune either when its first run after the hand-off failed before reading", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks", types: ["order.cancelled"] });
    await seedOrders([{ id: 57 }, { id: 58 }, { id: 59 }]);
    await env.DB.prepare("DELETE FROM order_events WHERE seq <= ?1")
      .bind(await feedHead())
      .run();
    await env.DB.prepare("UPDATE orders SET status = 'cancelled' WHERE id = 59").run();
    const wanted = String(await feedHead());
    const posted = vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response(null, { status: 204 }));
    const lane = laneOf(env, made.id);
    let posts = 0;
    try {
      // Handed the event while D1 is down: the run fails before it reads the feed.
      await runInDurableObject(lane, async (instance: WebhookLane) => {
        (instance as unknown as { env: Env }).env = { ...env, DB: failingD1().db };
        await instance.enqueue(made.id, [wanted]);
        await instance.running;
        (instance as unknown as { env: Env }).env = env;
        await instance.alarm();
        await instance.running;
      });
      await runInDurableObject(lane, (_, state) => state.storage.deleteAlarm());
      posts = posted.mock.calls.length;
    } finally {
      posted.mockRestore();
    }
    expect(posts).toBe(1);
    expect((await laneDeliveries(made.id)).map((row) => row.outcome)).toEqual(["delivered"]);
  });

  it("reads past a million sequences it does not want in one run, well within D1's 1,000 queries an invocation", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks", types: ["order.cancelled"] });
    // An event it does not want, a million sequences without one (a raised sequence stands for them; the feed is not
    // pruned), then one it wants.
    await seedOrders([{ id: 59 }]);
    await env.DB.prepare("UPDATE sqlite_sequence SET seq = seq + 1000000 WHERE name = 'order_events'").run();
    await seedOrders([{ id: 60 }]);
    await env.DB.prepare("UPDATE orders SET status = 'cancelled' WHERE id = 60").run();
    let queries = 0;
    const db = interceptD1({
      prepare: (statement) => {
        queries += 1;
        return statement;
      },
    });
    const { fetch, posts } = receivers();
    // Handed the event it wants, as the dispatcher would.
    expect(await runLaneOnce(made.id, { fetch, db, handed: Number(await feedHead()) })).toMatchObject({
      delivered: 1,
      next: null,
    });
    expect(posts).toHaveLength(1);
    expect(queries).toBeLessThanOrEqual(60);
  });

  it("fails once the events it was owed that the feed pruned, though the run's only other event was refused", async () => {
    const { endpointId } = await pendingDeliveries(owner.key, [81]);
    const refusing = receivers(() => new Response(null, { status: 500 }));
    const clock = Date.now();
    // Refused alone in its run: its row keys it, and the cursor stays before it.
    await runLaneOnce(endpointId, { fetch: refusing.fetch, now: () => clock });
    await seedOrders([{ id: 82 }, { id: 83 }, { id: 84 }]);
    while ((await dispatchQuietly()).more);
    const seqs = (await laneDeliveries(endpointId)).map((row) => row.seq);
    await env.DB.prepare("DELETE FROM order_events WHERE seq <= ?1").bind(seqs[2]!).run();
    const settled = () =>
      runInDurableObject(
        laneOf(env, endpointId),
        (_, state) =>
          state.storage.sql.exec<{ n: number }>("SELECT coalesce(sum(settled), 0) AS n FROM delivery_log").one().n,
      );
    // Before the row is due: the pruned events fail as one range, the last is refused too.
    for (const at of [clock + 100, clock + 200])
      await runLaneOnce(endpointId, { fetch: refusing.fetch, now: () => at });
    expect(await settled()).toBe(1);
    expect(refusing.posts.map((post) => post.webhookId)).toEqual([`evt_${seqs[0]}`, `evt_${seqs[3]}`]);
  });

  it("fails a row whose event was pruned before its retry, saying so, and sends the others", async () => {
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [55, 56]);
    await runLaneOnce(endpointId, { fetch: receivers(() => new Response(null, { status: 500 })).fetch });
    await env.DB.prepare("DELETE FROM order_events WHERE seq = ?1").bind(seqs[0]!).run();
    const { fetch, posts } = receivers();
    await runLaneOnce(endpointId, { fetch, now: () => Date.now() + 60_000 });
    expect(posts.map((post) => post.webhookId)).toEqual([`evt_${seqs[1]}`]);
    expect(await laneDeliveries(endpointId)).toMatchObject([
      { seq: seqs[0], outcome: "failed", last_error: "the event is older than the events kept" },
      { seq: seqs[1], outcome: "delivered" },
    ]);
  });

  it("reads its endpoint again with each page: a URL changed between pages holds from the next page on", async () => {
    const ids = Array.from({ length: 60 }, (_, i) => 2_000 + i);
    const { endpointId } = await pendingDeliveries(owner.key, ids);
    const { fetch, posts } = receivers();
    let moved = false;
    const movingFetch = (async (url: string, init: RequestInit) => {
      // Once the first page is under way, the owner points the endpoint elsewhere.
      if (!moved) {
        moved = true;
        await env.DB.prepare("UPDATE webhook_endpoints SET url = 'https://moved.example/hooks' WHERE id = ?1")
          .bind(endpointId)
          .run();
      }
      return fetch(url, init);
    }) as typeof globalThis.fetch;
    expect(await runLaneOnce(endpointId, { fetch: movingFetch })).toMatchObject({ delivered: 60, next: null });
    const to = (url: string) => posts.filter((post) => post.url === url).length;
    // The first page (50) went where it was read from; the rest to the URL read with the next page.
    expect(to("https://receiver.example/hooks")).toBe(50);
    expect(to("https://moved.example/hooks")).toBe(10);
  });

  it(`fails what cannot be sent at once, however much (${LANE_BATCH + 5}): one entry names the range`, async () => {
    const ids = Array.from({ length: LANE_BATCH + 5 }, (_, i) => 5_000 + i);
    const { endpointId } = await pendingDeliveries(owner.key, ids);
    expect(await laneDeliveries(endpointId)).toHaveLength(ids.length);
    await env.DB.prepare("UPDATE webhook_endpoints SET status = 'disabled', disabled_by = 'owner' WHERE id = ?1")
      .bind(endpointId)
      .run();
    const { fetch, posts } = receivers();
    expect(await runLaneOnce(endpointId, { fetch })).toMatchObject({ next: null });
    const rows = await laneDeliveries(endpointId);
    expect(rows).toHaveLength(ids.length);
    expect(rows.every((row) => row.outcome === "failed" && row.last_error === "the endpoint is disabled")).toBe(true);
    const blocks = await runInDurableObject(laneOf(env, endpointId), (_, state) =>
      state.storage.sql.exec("SELECT settled_entries AS entries FROM delivery_log WHERE settled > 0").toArray(),
    );
    expect(blocks).toHaveLength(1);
    expect(JSON.parse(blocks[0]!.entries as string)).toHaveLength(1);
    expect(posts).toEqual([]);
  });

  it(`tries nothing new from the feed while PENDING_CAP (${PENDING_CAP}) rows wait; once one gets through, the rest are due at once`, async () => {
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [31, 32, 33]);
    const [first, second, third] = seqs as [number, number, number];
    const now = Date.now();
    // The first event refused once and due now; rows of events the feed no longer holds fill the cap, due in an hour.
    await runInDurableObject(laneOf(env, endpointId), (_, state) => {
      const insert = (seq: number, dueAt: number) =>
        state.storage.sql.exec(
          "INSERT INTO pending_deliveries (seq, attempts, schedule_step, due_at, created_at, updated_at) VALUES " +
            "(?, 1, 1, ?, ?, ?)",
          seq,
          dueAt,
          now,
          now,
        );
      insert(first, now);
      for (let held = 1; held < PENDING_CAP; held++) insert(1_000_000_000 + held, now + 3_600_000);
    });
    // The receiver answers a turn of the event loop later: the run looks at the feed while the first is in flight.
    const { fetch, posts } = receivers(() => new Promise((answer) => setTimeout(() => answer(new Response("ok")), 0)));
    const capped = (await runLaneOnce(endpointId, { fetch, now: () => now })) as { next: number | null };
    expect(posts.map((post) => post.webhookId)).toEqual([`evt_${first}`]);
    expect(capped.next).toBe(now);
    // The next runs send what the cap held (its events gone, they settle as expired), then the feed behind it.
    for (let run = 0; run < 3 && posts.length < 3; run++) await runLaneOnce(endpointId, { fetch, now: () => now });
    expect(posts.map((post) => post.webhookId)).toEqual([first, second, third].map((seq) => `evt_${seq}`));
    expect((await laneDeliveries(endpointId)).filter((row) => row.outcome === "pending")).toEqual([]);
  });

  it("sends an event its owner retried before its first try once, though its row settled before the feed reached it", async () => {
    const made = await makeEndpoint(owner.key, { url: "https://paced.example/hooks", rateLimit: 1 });
    await seedOrders([{ id: 41 }, { id: 42 }]);
    await dispatchQuietly();
    const [, second] = await laneDeliveries(made.id);
    // The row the owner's retry makes (LaneObject.retry); through the API, the retry would wake a run of its own.
    await runInDurableObject(laneOf(env, made.id), (_, state) =>
      addRetried(state.storage.sql, second!.seq, undefined, second!.created_at, Date.now()),
    );
    const { fetch, posts } = receivers();
    // Paced, the run waits between starts: the retried row is answered and settled before the feed is read.
    let clock = Date.now();
    await runLaneOnce(made.id, { fetch, now: () => clock, sleep: async (ms) => void (clock += ms) });
    const sent = posts.map((post) => post.webhookId);
    expect(sent.filter((id) => id === `evt_${second!.seq}`)).toHaveLength(1);
    expect(sent).toHaveLength(2);
  });

  it("reads no further than the dispatcher's mark or what it was handed: an event past both waits for its hand-off", async () => {
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [71]);
    // Written after the pass: the mark, which a D1 restore's guard holds the sequence above, is before it.
    await seedOrders([{ id: 72 }]);
    const later = Number(await feedHead());
    const { fetch, posts } = receivers();
    await runLaneOnce(endpointId, { fetch });
    expect(posts.map((post) => post.webhookId)).toEqual([`evt_${seqs[0]}`]);
    await runLaneOnce(endpointId, { fetch, handed: later });
    expect(posts.map((post) => post.webhookId)).toEqual([`evt_${seqs[0]}`, `evt_${later}`]);
  });
});
