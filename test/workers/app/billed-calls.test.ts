import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runInDurableObject } from "cloudflare:test";
import { countedEnv, countGlobals, countStorage } from "../../../bench/billed-calls";
import {
  FAN_OUT_ENDPOINTS,
  noCalls,
  OPERATION_USE,
  REFUSED_ROWS,
  type BilledCalls,
  type Operation,
} from "../../../bench/operation-costs";
import { dispatchEvents } from "../../../src/webhook-delivery/dispatch-pass";
import { pendingCount } from "../../../src/webhook-delivery/lane-deliveries";
import { laneOf } from "../../../src/webhook-delivery/lane-calls";
import type { WebhookLane } from "../../../src/webhook-delivery/lane-object";
import { DELIVERY_LOG_MS } from "../../../src/webhook-delivery/lane-retention";
import { LOG_BLOCK_ENTRIES } from "../../../src/webhook-delivery/lane-log";
import { ENDPOINT_NOTICE_TYPES } from "../../../src/webhook-delivery/endpoint-notices";
import {
  dispatchQuietly,
  freshWebhookOwner,
  laneDeliveries,
  makeEndpoint,
  receivers,
} from "../../support/webhook-fixtures";
import { onAFakeClock, setClock } from "../../support/limits-clock";
import { apiWith } from "../../support/request";
import { clearOrders, seedOrders } from "../../support/seed";
import { storeTestKey } from "../../support/test-keys";

/**
 * What each operation costs as Cloudflare bills it, counted at the Worker
 * (bench/billed-calls.ts): KV reads and writes, D1 queries and the rows they
 * read and wrote, calls to Durable Objects, Analytics Engine points, Cache
 * API operations, subrequests; per request, once the isolate is warm (its
 * key cache, its lease), on a frozen clock. These are the counts as they
 * stand (bench/operation-costs.ts, which prices them): a change that adds a
 * KV read or a D1 query to a row fails here with the new count, and the
 * table is updated with it.
 */
onAFakeClock();
let restoreGlobals: (() => void) | undefined;
afterEach(() => restoreGlobals?.());
// Hundreds of requests: their log lines say nothing here.
beforeEach(() => void vi.spyOn(console, "log").mockImplementation(() => {}));

/** Requests measured per operation, after WARM_UP of the same. */
const MEASURED = 20;
const WARM_UP = 30;

type Sent = {
  path: string;
  key: string | null;
  method?: string;
  bindings?: Partial<Env>;
  headers?: Record<string, string>;
};
/** A steady caller's pace: the clock moves this much before each request (a frozen one would size no lease). */
const PACE_MS = 10;

/**
 * Each call per request, over MEASURED requests made after WARM_UP, each answered `status`, one every PACE_MS.
 */
async function perRequest(status: number, request: (index: number) => Sent): Promise<BilledCalls> {
  const send = async (index: number, calls: BilledCalls) => {
    const { path, key, method, bindings, headers } = request(index);
    vi.setSystemTime(Date.now() + PACE_MS);
    const response = await apiWith(countedEnv({ ...env, ...bindings }, calls), path, { key, method, headers });
    await response.arrayBuffer();
    expect(response.status, path).toBe(status);
  };
  for (let i = 0; i < WARM_UP; i++) await send(i, noCalls());
  const calls = noCalls();
  restoreGlobals = countGlobals(calls);
  for (let i = WARM_UP; i < WARM_UP + MEASURED; i++) await send(i, calls);
  restoreGlobals();
  restoreGlobals = undefined;
  return Object.fromEntries(
    Object.entries(calls).map(([name, count]) => [name, Math.round((count / MEASURED) * 100) / 100]),
  ) as unknown as BilledCalls;
}

/** The operation's counts are the table's (every mismatch of the file reported, not the first alone). */
const holds = (operation: Operation, measured: BilledCalls) => {
  const stated = OPERATION_USE[operation];
  const atTheWorker = Object.fromEntries(
    Object.keys(noCalls()).map((name) => [name, stated[name as keyof BilledCalls]]),
  );
  expect.soft(measured, operation).toEqual(atTheWorker);
};

const roomy = () => storeTestKey({ plan: "enterprise", limits: { perMinute: 1_000_000, perDay: 10_000_000 } });

describe("what one request is billed for, per operation", () => {
  it("the list, from the cache and from D1 (100 orders), and a v2 page of 100", async () => {
    setClock(5);
    await clearOrders();
    await seedOrders(Array.from({ length: 100 }, (_, index) => ({ id: index + 1 })));
    const { key } = await roomy();
    holds("cached list", await perRequest(200, () => ({ path: "/v1/store/orders", key })));
    holds(
      "uncached list",
      await perRequest(200, () => ({ path: "/v1/store/orders", key, bindings: { ORDER_LIST_CACHE: "off" } })),
    );
    holds("v2 page of 100", await perRequest(200, () => ({ path: "/v2/store/orders?limit=100", key })));
  });

  it("a cancel and a page of the event feed", async () => {
    setClock(5);
    await clearOrders();
    await seedOrders(Array.from({ length: WARM_UP + MEASURED }, (_, index) => ({ id: index + 1 })));
    const { key } = await roomy();
    holds(
      "cancel",
      await perRequest(204, (index) => ({ path: `/v1/store/orders/${index + 1}`, key, method: "DELETE" })),
    );
    holds("event feed page", await perRequest(200, () => ({ path: "/v2/store/order-events?limit=100", key })));
  });

  it("the refusals: a limited key's 429, a banned key's, and a 401 without a key", async () => {
    setClock(5);
    const limited = await storeTestKey({ plan: "free", limits: { perMinute: 1, perDay: 1_000 } });
    await apiWith(env, "/v1/store/orders", { key: limited.key });
    holds("429 limited key", await perRequest(429, () => ({ path: "/v1/store/orders", key: limited.key })));
    const banned = await storeTestKey({ plan: "free", limits: { perMinute: 1, perDay: 1_000 } });
    for (let i = 0; i < 25; i++) await apiWith(env, "/v1/store/orders", { key: banned.key });
    holds("429 banned key", await perRequest(429, () => ({ path: "/v1/store/orders", key: banned.key })));
    // A spray: each request from a /64 of its own (the request helper's default), each a new object.
    holds("401, a new /64 each", await perRequest(401, () => ({ path: "/v1/store/orders", key: null })));
    const oneAddress = { "CF-Connecting-IP": "2001:db8:77:77::1" };
    holds(
      "401, one address",
      await perRequest(401, () => ({ path: "/v1/store/orders", key: null, headers: oneAddress })),
    );
  });
});

/**
 * `changes` changes fanned out to 100 endpoints (ten accounts of ten, the most an account may have), to lanes already
 * at work: one dispatch pass handing each lane its events (the lane's `enqueue`), which wakes it to send them, through
 * the object's own entry point with its storage counted as billed (countStorage: rows, key-value puts and deletes,
 * setAlarm). What the pass cost, and what each delivery cost with its share of the pass and of its log block's prune.
 */
async function fanOut(changes: number, row: Operation) {
  setClock(5);
  await freshWebhookOwner();
  const endpoints: string[] = [];
  for (let account = 0; account < 10; account++) {
    const owner = await storeTestKey({ scopes: ["orders:read", "webhooks:manage"] });
    for (let i = 0; i < 10; i++)
      endpoints.push((await makeEndpoint(owner.key, { url: `https://r${account}-${i}.example/hooks` })).id);
  }

  /** A call of a lane and the runs it wakes, their storage's rows and their bindings' calls counted. */
  const inLane = <T>(
    endpointId: string,
    counts: { rows: { read: number; written: number }; calls: BilledCalls },
    call: (lane: WebhookLane) => Promise<T>,
  ) =>
    runInDurableObject(laneOf(env, endpointId), async (lane: WebhookLane, state) => {
      (lane as unknown as { env: Env }).env = countedEnv(env, counts.calls);
      const counted = countStorage(state.storage);
      try {
        const result = await call(lane);
        await lane.running;
        return result;
      } finally {
        const { read, written } = counted.rows();
        counts.rows.read += read;
        counts.rows.written += written;
        counted.restore();
      }
    });
  const counting = () => ({ rows: { read: 0, written: 0 }, calls: noCalls() });
  const hand = (lanes: ReturnType<typeof counting>, calls = noCalls()) =>
    dispatchEvents(countedEnv(env, calls).DB, (endpointId, seqs) => {
      calls.doRequests += 1;
      return inLane(endpointId, lanes, (lane) => lane.enqueue(endpointId, seqs));
    });

  const { fetch, posts } = receivers(() => new Response(null, { status: 204 }));
  const fetched = globalThis.fetch;
  globalThis.fetch = fetch as typeof globalThis.fetch;
  try {
    // Lanes at work: an earlier change delivered, so what a lane writes once (its name), once in ten minutes (its
    // endpoint's health) or once a minute (its watchdog) is written, and not counted against these deliveries.
    await seedOrders([{ id: 699 }]);
    await hand(counting());
    posts.length = 0;

    await seedOrders(Array.from({ length: changes }, (_, index) => ({ id: 700 + index })));
    const dispatch = noCalls();
    const lanes = counting();
    const handed = await hand(lanes, dispatch);
    expect(handed.enqueued).toBe(changes * FAN_OUT_ENDPOINTS);

    // A week on, the runs that prune: each lane's block emptied (the newest holds the cursor), a row written. A block
    // holds LOG_BLOCK_ENTRIES, so each delivery's share is a block's prune over that many.
    vi.setSystemTime(Date.now() + DELIVERY_LOG_MS + 1);
    const prune = counting();
    for (const endpointId of endpoints) await inLane(endpointId, prune, (lane) => lane.alarm());

    const deliveries = changes * FAN_OUT_ENDPOINTS;
    expect(posts).toHaveLength(deliveries);
    expect(await laneDeliveries(endpoints[0]!)).toEqual([]);
    const each = (count: number) => Math.round((count / deliveries) * 100) / 100;
    const calls = { ...dispatch };
    for (const [unit, count] of Object.entries(lanes.calls)) calls[unit as keyof BilledCalls] += count;
    return {
      pass: { ...dispatch, laneRows: lanes.rows },
      prunedRowsEach: prune.rows.written / endpoints.length,
      perDelivery: {
        // What is assumed, not counted (a lane's time awake, its storage), is the row's own.
        ...OPERATION_USE[row],
        d1Queries: each(calls.d1Queries),
        d1RowsRead: each(calls.d1RowsRead),
        d1RowsWritten: each(calls.d1RowsWritten),
        doRequests: each(calls.doRequests),
        doRowsRead: each(lanes.rows.read),
        doRowsWritten:
          Math.round(
            (lanes.rows.written / deliveries + prune.rows.written / endpoints.length / LOG_BLOCK_ENTRIES) * 100,
          ) / 100,
        subrequests: each(posts.length),
      },
    };
  } finally {
    globalThis.fetch = fetched;
  }
}

describe("what a change's deliveries are billed for", () => {
  it("one change fanned out to 100 endpoints: the dispatch pass, and each endpoint's lane taking and sending it", async () => {
    const { pass, perDelivery } = await fanOut(1, "webhook delivery");
    // The pass reads the event, every enabled endpoint and the feed's head, and moves its mark; each lane, woken, reads
    // the event from the feed, sends it and writes one row: its log's block, with its cursor.
    expect.soft(pass, "dispatch pass").toEqual({
      ...noCalls(),
      d1Queries: 5,
      d1RowsRead: 304,
      d1RowsWritten: 1,
      doRequests: 100,
      laneRows: { read: 1700, written: 100 },
    });
    expect.soft(perDelivery, "a delivery, alone").toEqual(OPERATION_USE["webhook delivery"]);
  });

  it("5 changes to the same 100 endpoints, as a debounced pass hands them at 20 a second: each lane's share spread", async () => {
    const { perDelivery } = await fanOut(5, "webhook delivery, 5 a run");
    expect.soft(perDelivery, "a delivery, 5 a run").toEqual(OPERATION_USE["webhook delivery, 5 a run"]);
  });

  it("20 changes to the same 100 endpoints in one pass: each lane's share spread further", async () => {
    const { perDelivery } = await fanOut(20, "webhook delivery, 20 a run");
    expect.soft(perDelivery, "a delivery, 20 a run").toEqual(OPERATION_USE["webhook delivery, 20 a run"]);
  });
});

/** Production's retry schedule (wrangler.jsonc): nine waits, ten attempts. */
const PRODUCTION_RETRIES = "10,60,300,1800,7200,21600,43200,86400,86400";

/**
 * `count` deliveries to a lane already at work, handed in one wake, each refused `refusals` times (then taken), each
 * retry run by the lane's alarm when due, and the prune a week after: the rows its lane writes meanwhile, as billed
 * (none refused: what it writes anyway).
 */
async function refusedDeliveries(refusals: number, count = 1, told = false) {
  setClock(5);
  await freshWebhookOwner();
  const owner = await storeTestKey({ scopes: ["orders:read", "webhooks:manage"] });
  const endpointId = (await makeEndpoint(owner.key, { url: "https://refusing.example/hooks" })).id;
  const watcher = told
    ? (await makeEndpoint(owner.key, { url: "https://watcher.example/hooks", types: [...ENDPOINT_NOTICE_TYPES] })).id
    : undefined;
  let refusing = false;
  const { fetch, posts } = receivers((url) => {
    if (url.startsWith("https://watcher.example")) return new Response(null, { status: 204 });
    const id = posts.filter((post) => post.url === url).at(-1)!.webhookId;
    const tries = posts.filter((post) => post.webhookId === id).length;
    return new Response(null, { status: refusing && tries <= refusals ? 503 : 204 });
  });
  const rows = { read: 0, written: 0 };
  const inLane = (call: (lane: WebhookLane) => Promise<unknown>, counted: boolean) =>
    runInDurableObject(laneOf(env, endpointId), async (lane: WebhookLane, state) => {
      (lane as unknown as { env: Env }).env = { ...env, WEBHOOK_RETRY_SECONDS: PRODUCTION_RETRIES };
      const counting = countStorage(state.storage);
      try {
        await call(lane);
        await lane.running;
      } finally {
        if (counted) rows.written += counting.rows().written;
        counting.restore();
      }
    });
  const fetched = globalThis.fetch;
  globalThis.fetch = fetch as typeof globalThis.fetch;
  try {
    // At work: an earlier change delivered.
    await seedOrders([{ id: 800 }]);
    await dispatchEvents(env.DB, (id, seqs) => inLane((lane) => lane.enqueue(id, seqs), false).then(() => 1));
    refusing = true;
    if (count > 0) await seedOrders(Array.from({ length: count }, (_, index) => ({ id: 801 + index })));
    await dispatchEvents(env.DB, (id, seqs) => inLane((lane) => lane.enqueue(id, seqs), true).then(() => 1));
    const refused = async () => (await laneDeliveries(endpointId)).filter((each) => each.seq > 0).slice(-count);
    for (let retry = 0; retry < 20; retry++) {
      const { due, pending } = await runInDurableObject(laneOf(env, endpointId), async (_, state) => ({
        due: await state.storage.getAlarm(),
        pending: pendingCount(state.storage.sql),
      }));
      if (pending === 0 || due === null) break;
      vi.setSystemTime(Math.max(due, Date.now()) + 1);
      await inLane((lane) => lane.alarm(), true);
    }
    const settled = await refused();
    vi.setSystemTime(Date.now() + DELIVERY_LOG_MS + 1);
    await inLane((lane) => lane.alarm(), true);
    const told = watcher === undefined ? [] : posts.filter((post) => post.url.startsWith("https://watcher.example"));
    return { written: rows.written, settled, left: await laneDeliveries(endpointId), told };
  } finally {
    if (watcher !== undefined)
      await runInDurableObject(laneOf(env, watcher), async (lane: WebhookLane, state) => {
        await lane.running;
        await state.storage.deleteAlarm();
      });
    globalThis.fetch = fetched;
  }
}

/** An endpoint with `count` events handed to its lane and not yet sent, disabled: the rows its lane's run writes. */
async function disabledWith(count: number) {
  setClock(5);
  await freshWebhookOwner();
  const owner = await storeTestKey({ scopes: ["orders:read", "webhooks:manage"] });
  const endpointId = (await makeEndpoint(owner.key, { url: "https://disabled.example/hooks" })).id;
  await seedOrders(Array.from({ length: count }, (_, index) => ({ id: 900 + index })));
  while ((await dispatchQuietly()).more);
  await env.DB.prepare("UPDATE webhook_endpoints SET status = 'disabled', disabled_by = 'owner' WHERE id = ?1")
    .bind(endpointId)
    .run();
  const written = await countedInLane(endpointId, (lane) => lane.alarm());
  const left = await laneDeliveries(endpointId);
  expect(left).toHaveLength(count);
  expect(left.every((row) => row.outcome === "failed")).toBe(true);
  return { written, endpointId };
}

/** The rows the lane's storage writes for one call on it, as billed: until the call returns, not the runs it wakes. */
const countedInLane = (endpointId: string, call: (lane: WebhookLane) => Promise<unknown>) =>
  runInDurableObject(laneOf(env, endpointId), async (lane: WebhookLane, state) => {
    const counting = countStorage(state.storage);
    try {
      await call(lane);
      return counting.rows().written;
    } finally {
      counting.restore();
    }
  });

/** That endpoint enabled again and its failed events recovered: the rows `recover` writes, then each sent once. */
async function recoveredAfterDisabled(count: number) {
  const { endpointId } = await disabledWith(count);
  await env.DB.prepare("UPDATE webhook_endpoints SET status = 'enabled', disabled_by = NULL WHERE id = ?1")
    .bind(endpointId)
    .run();
  const { fetch, posts } = receivers();
  const fetched = globalThis.fetch;
  globalThis.fetch = fetch as typeof globalThis.fetch;
  try {
    const written = await countedInLane(endpointId, async (lane) => {
      expect(await lane.recover(endpointId, 0, 1_000)).toEqual({ recovered: count, more: false });
    });
    await runInDurableObject(laneOf(env, endpointId), (lane: WebhookLane) => lane.running);
    const left = await laneDeliveries(endpointId);
    expect(left.map((row) => row.outcome)).toEqual(Array(count).fill("delivered"));
    // Each once, oldest first.
    expect(posts.map((post) => post.webhookId)).toEqual(left.map((row) => `evt_${row.seq}`));
    return written;
  } finally {
    globalThis.fetch = fetched;
  }
}

describe("what a delivery that is refused is billed for", () => {
  // Alone, its runs write for it alone (its retries' alarms, the cursor); in a hand-off of 5 or 20 those are shared,
  // and its own are its row, its retries, its settling and the prune's share. What the lane writes over the same days
  // with none refused (the prune of the earlier change's log entry, counted with that change) is not theirs.
  it.each([
    ["once, then taken", 1, 1, "onceAlone", "delivered", 2],
    ["once, then taken", 5, 1, "once5", "delivered", 2],
    ["once, then taken", 20, 1, "once20", "delivered", 2],
    ["until its schedule is spent (production's ten attempts)", 1, 10, "spentAlone", "failed", 10],
    ["until its schedule is spent", 5, 10, "spent5", "failed", 10],
    ["until its schedule is spent", 20, 10, "spent20", "failed", 10],
  ] as const)("refused %s, %i a run", async (_, count, refusals, row, outcome, attempts) => {
    const anyway = (await refusedDeliveries(refusals, 0)).written;
    expect(anyway).toBe(1);
    const { written, settled, left } = await refusedDeliveries(refusals, count);
    expect(settled.map((one) => [one.outcome, one.attempts])).toEqual(Array(count).fill([outcome, attempts]));
    expect(left).toEqual([]);
    expect((written - anyway) / count).toBe(REFUSED_ROWS[row]);
  });

  it("refused until its schedule is spent, alone, its account with an endpoint told of its notices: the notice owed while it is handed, its put and delete more", async () => {
    const anyway = (await refusedDeliveries(10, 0, true)).written;
    const { written, settled, told } = await refusedDeliveries(10, 1, true);
    expect(settled.map((one) => [one.outcome, one.attempts])).toEqual([["failed", 10]]);
    expect(told.map((post) => post.webhookId)).toEqual([expect.stringMatching(/^ntc_\d+$/)]);
    expect(written - anyway).toBe(REFUSED_ROWS.spentAlone + 2);
  });

  it("an endpoint disabled with N events not yet sent: the same rows for 5 as for 500", async () => {
    const few = (await disabledWith(5)).written;
    expect((await disabledWith(500)).written).toBe(few);
    expect(few).toBe(REFUSED_ROWS.disabled);
  });

  it("a hand-off to a lane with a row pending: no row written, however many come while it is", async () => {
    setClock(5);
    await freshWebhookOwner();
    const owner = await storeTestKey({ scopes: ["orders:read", "webhooks:manage"] });
    const endpointId = (await makeEndpoint(owner.key, { url: "https://refusing.example/hooks" })).id;
    const { fetch } = receivers(() => new Response(null, { status: 503 }));
    const fetched = globalThis.fetch;
    globalThis.fetch = fetch as typeof globalThis.fetch;
    try {
      // Refused once: its row is due again later, its retry's alarm set.
      await seedOrders([{ id: 850 }]);
      await dispatchEvents(env.DB, async (id, seqs) => {
        await runInDurableObject(laneOf(env, id), async (lane: WebhookLane) => {
          await lane.enqueue(id, seqs);
          await lane.running;
        });
        return 1;
      });
      expect((await laneDeliveries(endpointId)).map((row) => row.outcome)).toEqual(["pending"]);
      const written: number[] = [];
      for (let handOff = 0; handOff < 3; handOff++) {
        await seedOrders([{ id: 851 + handOff }]);
        await dispatchEvents(env.DB, async (id, seqs) => {
          written.push(await countedInLane(id, (lane) => lane.enqueue(id, seqs)));
          await runInDurableObject(laneOf(env, id), (lane: WebhookLane) => lane.running);
          return 1;
        });
      }
      expect(written).toEqual([0, 0, 0]);
    } finally {
      globalThis.fetch = fetched;
      await runInDurableObject(laneOf(env, endpointId), async (lane: WebhookLane, state) => {
        await lane.running;
        await state.storage.deleteAlarm();
      });
    }
  });

  it("its N failed events recovered: one row for 5 as for 500, and then each sent once, oldest first", async () => {
    const few = await recoveredAfterDisabled(5);
    expect(await recoveredAfterDisabled(500)).toBe(few);
    expect(few).toBe(REFUSED_ROWS.recovered);
  });
});
