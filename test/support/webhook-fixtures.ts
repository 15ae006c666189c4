import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { beforeEach, expect } from "vitest";
import { accountLiveness } from "../../src/keys/live-account";
import { TtlCache } from "../../src/lib/ttl-cache";
import { dispatchEvents, type DispatchOptions, type HandToLane } from "../../src/webhook-delivery/dispatch-pass";
import {
  newestDeliveries,
  settledRows,
  type LaneDelivery,
  type Settle,
} from "../../src/webhook-delivery/lane-deliveries";
import { failedRange, readSettled } from "../../src/webhook-delivery/lane-settled";
import { addReplay, inReplay, replays } from "../../src/webhook-delivery/lane-replays";
import { laneEndpoint } from "../../src/webhook-delivery/endpoint-table";
import { wantedAfter } from "../../src/webhook-delivery/lane-feed";
import { appendSettled, appendToLog, logCursor, newestLogged } from "../../src/webhook-delivery/lane-log";
import { takeHandOff, type WebhookLane } from "../../src/webhook-delivery/lane-object";
import { laneOf } from "../../src/webhook-delivery/lane-calls";
import { DISPATCHER_NAME } from "../../src/webhook-delivery/dispatcher-calls";
import type { WebhookDispatcher } from "../../src/webhook-delivery/dispatcher-object";
import { runLane, type LaneContext } from "../../src/webhook-delivery/lane-run";
import { clearOrders, seedOrders } from "./seed";
import { apiWith } from "./request";
import { storeTestKey, type TestKey } from "./test-keys";

/**
 * The bindings with a dispatcher that does nothing when woken or nudged: these tests run the passes themselves. It
 * takes exactly what the real object's calls are (WebhookDispatcher's wake and nudge, by their names), so a call the
 * Worker makes of it that the object does not have fails the test instead of being logged and passed over.
 */
export const withoutDispatcher = (): Env => {
  const idle: Pick<WebhookDispatcher, "wake" | "nudge"> = { wake: async () => {}, nudge: async () => {} };
  const dispatcher = new Proxy(idle, {
    get(target, name) {
      if (name in target || name === "then") return target[name as keyof typeof target];
      throw new Error(`the dispatcher stand-in was asked for ${String(name)}, which it does not have`);
    },
  });
  return { ...env, WEBHOOK_DISPATCHER: { getByName: () => dispatcher } as unknown as Env["WEBHOOK_DISPATCHER"] };
};

/** Makes an endpoint through the API, without waking the dispatcher. */
export async function makeEndpoint(
  key: string,
  body: { url: string; types?: string[]; rateLimit?: number; signing?: "hmac" | "ed25519"; ordering?: "fifo" },
): Promise<{ id: string; secret: string; publicKey: string | null }> {
  const response = await apiWith(withoutDispatcher(), "/v2/webhook-endpoints", {
    method: "POST",
    key,
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(201);
  return response.json();
}

/** The feed's head now: a pass from there sees only what the test writes. */
export const feedHead = async () =>
  String((await env.DB.prepare("SELECT coalesce(max(seq), 0) AS seq FROM order_events").first<number>("seq"))!);

/**
 * A clean slate for a webhook test (no orders, endpoints or deliveries), and a key that manages endpoints: the owner of
 * what the test makes.
 */
export async function freshWebhookOwner(): Promise<TestKey> {
  // A dispatcher an earlier test ran watches on, once a second: stopped, it hands this test's lanes nothing behind its
  // back.
  await runInDurableObject(env.WEBHOOK_DISPATCHER.getByName(DISPATCHER_NAME), (_, state) =>
    state.storage.deleteAlarm(),
  );
  // And the lanes of the endpoints an earlier test made: their alarms would run them (retries, paced sends) during this
  // one.
  const { results: endpoints } = await env.DB.prepare("SELECT id FROM webhook_endpoints").all<{ id: string }>();
  await Promise.all(
    endpoints.map(({ id }) => runInDurableObject(laneOf(env, id), (_, state) => state.storage.deleteAlarm())),
  );
  await clearOrders();
  await env.DB.batch([
    env.DB.prepare("DELETE FROM webhook_endpoints"),
    env.DB.prepare("UPDATE webhook_dispatch SET mark = (SELECT coalesce(max(seq), 0) FROM order_events)"),
  ]);
  return storeTestKey({ scopes: ["orders:read", "orders:write", "webhooks:manage"] });
}

/**
 * A receiver that never answers: its request ends only when the signal the POST was sent with aborts it (the real
 * timeout), at once when it already has, as fetch does (a receiver a test held past the timeout is called late).
 */
export const silentReceiver = (_url: string, signal: AbortSignal | undefined): Promise<Response> =>
  new Promise((_, reject) => {
    if (!signal) return;
    if (signal.aborted) return reject(signal.reason);
    signal.addEventListener("abort", () => reject(signal.reason));
  });

/** A receiver per URL: answers the statuses given in turn (200 after), or what `answer` makes; records each POST. */
export function receivers(
  answer: (url: string, signal: AbortSignal | undefined) => Promise<Response> | Response = () => new Response("ok"),
) {
  const posts: { url: string; webhookId: string }[] = [];
  const fetch = (async (url: string, init: RequestInit) => {
    posts.push({ url, webhookId: new Headers(init.headers).get("webhook-id")! });
    return answer(url, init.signal ?? undefined);
  }) as unknown as typeof globalThis.fetch;
  return { posts, fetch };
}

/**
 * Hands each lane its events as the dispatcher does, but wakes none: the
 * test runs the lanes itself (runLaneOnce), with a receiver and a clock of
 * its own.
 */
export const quietLanes: HandToLane = (endpointId, seqs) =>
  runInDurableObject(laneOf(env, endpointId), (_, state) => takeHandOff(state.storage, endpointId, seqs));

/** A dispatch pass from the mark in D1, handing the lanes their events quietly. */
export const dispatchQuietly = (handToLane: HandToLane = quietLanes, options?: DispatchOptions) =>
  dispatchEvents(env.DB, handToLane, options);

/** A failing endpoint's periods as wrangler.jsonc's defaults have them: a day, then 5 days. */
export const DEFAULT_HEALTH = { failingAfterMs: 86_400_000, disableAfterMs: 432_000_000 };

/** What a test hands a lane's run: its receiver at least. */
type LaneOverrides = Partial<LaneContext> & Pick<LaneContext, "fetch">;

/**
 * One run of an endpoint's lane, over the real D1 and KV, with what the test hands it (or makes of the object's state);
 * notices are handed to their recipients' lanes quietly (quietLanes).
 */
export function runLaneOnce(
  endpointId: string,
  overrides: LaneOverrides | ((state: DurableObjectState, lane: WebhookLane) => LaneOverrides),
) {
  return runInDurableObject(laneOf(env, endpointId), (lane: WebhookLane, state) =>
    runLane({
      sql: state.storage.sql,
      kv: state.storage.kv,
      transactionSync: (closure) => state.storage.transactionSync(closure),
      db: env.DB,
      health: DEFAULT_HEALTH,
      handToLane: quietLanes,
      endpointId,
      sealingKey: env.WEBHOOK_SECRETS_KEY!,
      retrySeconds: [1, 2, 3],
      now: Date.now,
      sleep: async () => {},
      handed: 0,
      handedBefore: 0,
      prunes: { dueAt: 0 },
      accountLiveness: (budget) => accountLiveness(env.ACCOUNTS, budget, new TtlCache(10)),
      ...(typeof overrides === "function" ? overrides(state, lane) : overrides),
    }),
  );
}

/**
 * A lane's deliveries, by event, each as a row of its own would say it: its pending rows and replays, what settled
 * (a range's events each), its log's entries (delivered at the first try), and the events its endpoint wants after
 * its cursor (pending, due since written).
 */
export const laneDeliveries = async (endpointId: string): Promise<LaneDelivery[]> => {
  const endpoint = await laneEndpoint(env.DB, endpointId);
  return runInDurableObject(laneOf(env, endpointId), async (_, state) => {
    const { sql } = state.storage;
    const found = new Map<number, LaneDelivery>();
    const add = (delivery: LaneDelivery) => void (found.has(delivery.seq) || found.set(delivery.seq, delivery));
    const record = (seq: number, outcome: LaneDelivery["outcome"], at: number, more: Partial<LaneDelivery> = {}) =>
      add({
        seq,
        outcome,
        attempts: 0,
        schedule_step: 0,
        last_status: null,
        last_error: null,
        due_at: outcome === "pending" ? at : null,
        created_at: at,
        updated_at: at,
        attempt_log: [],
        ...more,
      });
    const wanted = async (after: number, upTo?: number) => {
      const events: { seq: number; createdAt: number }[] = [];
      for (let more = endpoint !== null; more; ) {
        const read = await wantedAfter(env.DB, endpoint!, after, 500, { upTo });
        events.push(...read.events);
        ({ through: after, more } = read);
        more &&= upTo === undefined || after < upTo;
      }
      return events;
    };
    for (const row of newestDeliveries(sql, Number.MAX_SAFE_INTEGER)) add(row);
    for (const replay of replays(sql))
      for (const event of await wanted(replay.after, replay.seq))
        if (inReplay(replay, event.seq)) record(event.seq, "pending", event.createdAt);
    for (const entry of readSettled(sql, () => true)) {
      if (entry.after !== undefined && entry.after >= entry.seq) continue;
      const settled = {
        attempts: entry.attempts,
        last_status: entry.lastStatus,
        last_error: entry.lastError,
        updated_at: entry.settledAt,
        attempt_log: entry.attemptLog,
      };
      const events = entry.after === undefined ? [] : await wanted(entry.after, entry.seq);
      if (events.length === 0) record(entry.seq, entry.outcome, entry.createdAt, settled);
      for (const event of events) record(event.seq, entry.outcome, event.createdAt, settled);
    }
    for (const [seq, at, status, durationMs, response] of newestLogged(sql, Number.MAX_SAFE_INTEGER))
      record(seq, "delivered", at, {
        attempts: 1,
        last_status: status,
        attempt_log: [[at, status, durationMs, response, null]],
      });
    if (endpoint !== null)
      for (const { seq, createdAt } of await wanted(logCursor(sql) ?? endpoint.from_seq))
        record(seq, "pending", createdAt);
    return [...found.values()].sort((a, b) => a.seq - b.seq);
  });
};

/**
 * The lane's events `first` to `last` as `recover` leaves them once they failed at once (the endpoint disabled): past
 * the cursor, the range's entry emptied, and one row replaying them but those in `skip`.
 */
export const replaying = (endpointId: string, first: number, last: number, skip: number[] = []) =>
  runInDurableObject(laneOf(env, endpointId), (_, state) => {
    const { sql } = state.storage;
    const at = Date.now();
    state.storage.kv.put("endpointId", endpointId);
    appendToLog(sql, { from: Math.max(first - 1, logCursor(sql) ?? 0), through: Math.max(last, logCursor(sql) ?? 0) });
    appendSettled(sql, [{ ...failedRange(first - 1, last, "the endpoint is disabled", at, at), after: last }]);
    addReplay(sql, first - 1, last, skip, at);
  });

/** Settles pending rows as a run's flush does, into the log, the cursor where it is; how many. */
export function settleNow(sql: SqlStorage, settles: readonly Settle[], now: number): number {
  const entries = settledRows(sql, settles, now, logCursor(sql) ?? 0);
  appendSettled(sql, entries);
  return entries.length;
}

/** One delivery of a lane, by its event. */
export const laneDelivery = async (endpointId: string, seq: number | string) =>
  (await laneDeliveries(endpointId)).find((row) => row.seq === Number(seq));

/**
 * Pending deliveries of new orders to a new endpoint of the key's account: the endpoint and the events' sequences, in
 * order.
 */
export async function pendingDeliveries(
  key: string,
  ids: number[],
  url = "https://receiver.example/hooks",
): Promise<{ endpointId: string; secret: string; seqs: number[] }> {
  const made = await makeEndpoint(key, { url });
  await seedOrders(ids.map((id) => ({ id })));
  // Passes until the mark is at the head: a lane reads no further than the mark.
  while ((await dispatchQuietly()).more);
  return { endpointId: made.id, secret: made.secret, seqs: (await laneDeliveries(made.id)).map((row) => row.seq) };
}

/** A statement whose every call fails, as one read during an outage. */
export function outageStatement(): D1PreparedStatement {
  const fail = () => Promise.reject(new Error("D1_ERROR: Network connection lost."));
  return {
    bind: () => outageStatement(),
    first: fail,
    all: fail,
    run: fail,
    raw: fail,
  } as unknown as D1PreparedStatement;
}

/** The test's owner of webhook endpoints: a fresh one before each test of the file (freshWebhookOwner). */
export function webhookOwnerOfEachTest(): TestKey {
  const owner = {} as TestKey;
  beforeEach(async () => void Object.assign(owner, await freshWebhookOwner()));
  return owner;
}
