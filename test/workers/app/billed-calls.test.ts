import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { countedEnv, countGlobals, noCalls, type BilledCalls } from "../../../bench/billed-calls";
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
 * stand (docs/design/performance.md#what-a-million-requests-cost): a change
 * that adds a KV read or a D1 query to a row fails here with the new count,
 * and the cost table is updated with it.
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

/** Each operation's calls per request, as they stand; those not named are 0. */
const COUNTS: Record<string, Partial<BilledCalls>> = {
  // The version of the list (one row), then the body from the Cache API.
  "cached list": { d1Queries: 1, d1RowsRead: 1, analyticsPoints: 1, cacheOps: 1 },
  // The version, the count, the pages: about 4 rows read per order of 100 (the index and the table).
  "uncached list": { d1Queries: 3, d1RowsRead: 403, analyticsPoints: 1 },
  "v2 page of 100": { d1Queries: 1, d1RowsRead: 101, analyticsPoints: 1 },
  // The guarded UPDATE and its triggers (the event, the list's version, ...); the dispatcher nudged.
  cancel: { d1Queries: 2, d1RowsRead: 10, d1RowsWritten: 10, doRequests: 1, analyticsPoints: 1 },
  "event feed page": { d1Queries: 2, d1RowsRead: 103, analyticsPoints: 1 },
  // Answered in the isolate: the object hears of the refusals in one call a second, off these requests.
  "429 limited key": { analyticsPoints: 1 },
  "429 banned key": { analyticsPoints: 1 },
  // Every new address group is an object of its own, asked once (docs/design/performance.md#the-401-without-a-key).
  "401, a new /64 each": { doRequests: 1, analyticsPoints: 1 },
  // A keyless address's limit is small: its leases are too.
  "401, one address": { doRequests: 0.45, analyticsPoints: 1 },
};

/** The operation's counts are the table's (every mismatch of the file reported, not the first alone). */
const holds = (operation: string, measured: BilledCalls) =>
  expect.soft(measured, operation).toEqual({ ...noCalls(), ...COUNTS[operation] });

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
