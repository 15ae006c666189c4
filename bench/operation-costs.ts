/**
 * What a million of each operation costs on Workers Paid
 * (docs/design/performance.md#what-a-million-requests-cost): the calls each
 * makes, as test/workers/app/billed-calls.test.ts counts and holds them,
 * priced at Cloudflare's list prices, with the CPU the bench measures per
 * response. Beyond what the plan includes each month: the first 10 million
 * requests, 30 million CPU ms and so on are in the $5 (PRICES' `included`).
 */

import { DELIVERY_LOG_MS, LOG_ENTRY_BYTES } from "../src/webhook-delivery/lane-retention";
import { LANE_CONCURRENCY } from "../src/webhook-delivery/lane-pacing";

/** What one request is billed for at the Worker, as bench/billed-calls.ts counts it. */
export interface BilledCalls {
  kvReads: number;
  kvWrites: number;
  kvLists: number;
  d1Queries: number;
  /** Rows D1 says a statement read (`meta.rows_read`; for `.raw()`, read as `.all()`). */
  d1RowsRead: number;
  d1RowsWritten: number;
  /** Calls to Durable Object stubs: each is one request billed to the object. */
  doRequests: number;
  analyticsPoints: number;
  cacheOps: number;
  /** fetch() to anywhere but a binding: a subrequest (a webhook receiver, GitHub's keys, the SQL API). */
  subrequests: number;
}

export const noCalls = (): BilledCalls => ({
  kvReads: 0,
  kvWrites: 0,
  kvLists: 0,
  d1Queries: 0,
  d1RowsRead: 0,
  d1RowsWritten: 0,
  doRequests: 0,
  analyticsPoints: 0,
  cacheOps: 0,
  subrequests: 0,
});

/** One billed unit: its price per million beyond what Workers Paid includes a month, and that allowance. */
interface Price {
  perMillion: number;
  includedMillions: number;
}

/**
 * Cloudflare's published list prices for Workers Paid (Standard usage model), as read for this table in 2025 from
 * developers.cloudflare.com: workers/platform/pricing, durable-objects/platform/pricing, kv/platform/pricing,
 * d1/platform/pricing, analytics/analytics-engine/pricing. Not re-read from this machine (no network): check them
 * before quoting a bill. The Cache API and subrequests are not billed.
 */
export const PRICES = {
  workerRequests: { perMillion: 0.3, includedMillions: 10 },
  cpuMs: { perMillion: 0.02, includedMillions: 30 },
  doRequests: { perMillion: 0.15, includedMillions: 1 },
  doGbSeconds: { perMillion: 12.5, includedMillions: 0.4 },
  /** SQL storage, in GB-months (millions of them is a unit like the others: 5 GB-months included, $0.20 each). */
  doStorageGbMonths: { perMillion: 200_000, includedMillions: 0.000_005 },
  doRowsRead: { perMillion: 0.001, includedMillions: 25_000 },
  doRowsWritten: { perMillion: 1, includedMillions: 50 },
  kvReads: { perMillion: 0.5, includedMillions: 10 },
  kvWrites: { perMillion: 5, includedMillions: 1 },
  kvLists: { perMillion: 5, includedMillions: 1 },
  d1RowsRead: { perMillion: 0.001, includedMillions: 25_000 },
  d1RowsWritten: { perMillion: 1, includedMillions: 50 },
  analyticsPoints: { perMillion: 0.25, includedMillions: 10 },
} as const satisfies Record<string, Price>;
export const PLAN_DOLLARS_A_MONTH = 5;

/** The calls of one operation beyond the Worker's own: the objects' own rows, where they were counted. */
export interface OperationUse extends BilledCalls {
  /** 1 for a request to the Worker (billed with its CPU); 0 for work done in a Durable Object (billed by duration). */
  workerRequests: number;
  /** Rows a Durable Object's SQLite read and wrote for it (a lane's; the limiter's are per lease, not counted). */
  doRowsRead: number;
  doRowsWritten: number;
  /**
   * Seconds an object is kept active for it, where that is more than the milliseconds of a call: a lane waiting on
   * its receiver. An assumption, not a measure (laneAwakeSeconds).
   */
  doActiveSeconds: number;
  /** GB-months of an object's SQL storage it keeps: a delivery's rows, for the week the delivery log reaches back. */
  doStorageGbMonths: number;
}

/**
 * A lane awake for one delivery, assumed: a receiver's 50 ms answer, shared by the POSTs its run has in flight at once
 * (the run's deliveries, LANE_CONCURRENCY at most).
 */
const laneAwakeSeconds = (perRun: number) => 0.05 / Math.min(LANE_CONCURRENCY, perRun);
/** A delivery that went through at its first try: its log entry, kept for the delivery log's week, in GB-months. */
const DELIVERY_STORAGE_GB_MONTHS = (LOG_ENTRY_BYTES / 1e9) * (DELIVERY_LOG_MS / (30 * 86_400_000));
/** Durable Objects are billed at 128 MB, whatever they use. */
const DO_GB = 0.128;

const use = (calls: Partial<OperationUse>): OperationUse => ({
  ...noCalls(),
  workerRequests: 1,
  doRowsRead: 0,
  doRowsWritten: 0,
  doActiveSeconds: 0,
  doStorageGbMonths: 0,
  ...calls,
});

/**
 * Each operation's calls per request, as the counts test measures them (warm isolate, a steady caller); that test
 * fails when one changes, and this table changes with it.
 */
export const OPERATION_USE = {
  // The version of the list (one row), then the body from the Cache API.
  "cached list": use({ d1Queries: 1, d1RowsRead: 1, analyticsPoints: 1, cacheOps: 1 }),
  // The version, the count, the pages: about 4 rows read per order of 100 (the index and the table).
  "uncached list": use({ d1Queries: 3, d1RowsRead: 403, analyticsPoints: 1 }),
  "v2 page of 100": use({ d1Queries: 1, d1RowsRead: 101, analyticsPoints: 1 }),
  // The guarded UPDATE and its triggers (the event, the list's version...); the dispatcher nudged, its alarm and mark
  // written once a pass, 4 passes a second at 20 cancels a second
  // (test/workers/webhooks/webhook-dispatcher-nudge.test.ts).
  cancel: use({
    d1Queries: 2,
    d1RowsRead: 10,
    d1RowsWritten: 10,
    doRequests: 1,
    doRowsWritten: 0.4,
    analyticsPoints: 1,
  }),
  "event feed page": use({ d1Queries: 2, d1RowsRead: 103, analyticsPoints: 1 }),
  // Answered in the isolate: the object hears of the refusals in one call a second, off these requests.
  "429 limited key": use({ analyticsPoints: 1 }),
  "429 banned key": use({ analyticsPoints: 1 }),
  // Every new address group is an object of its own, asked once (docs/design/performance.md#the-401-without-a-key).
  "401, a new /64 each": use({ doRequests: 1, analyticsPoints: 1 }),
  // A keyless address's limit is small: its leases are too.
  "401, one address": use({ doRequests: 0.45, analyticsPoints: 1 }),
  // One event to one of 100 endpoints, its lane already at work sending only it (the most a delivery costs: a busy
  // lane runs once for several): the pass's share, the hand-off (one object request; the account's answer is the
  // lane's for 5 s), the run's reads of the endpoint and the feed, and its one row written, the log's block with the
  // cursor; a hundredth of the block's prune a week later. A lane's watchdog (a row a minute) and its endpoint's health
  // (a row in ten) are shares too small to show.
  "webhook delivery": use({
    workerRequests: 0,
    doActiveSeconds: laneAwakeSeconds(1),
    doStorageGbMonths: DELIVERY_STORAGE_GB_MONTHS,
    d1Queries: 3.05,
    d1RowsRead: 30.04,
    d1RowsWritten: 0.01,
    doRequests: 1,
    doRowsRead: 17,
    doRowsWritten: 1.01,
    subrequests: 1,
  }),
  // The same with 5 changes a pass, as a dispatcher nudged by 20 cancels a second hands them (NUDGE_GAP_MS): the pass,
  // the run and its row spread over the 5.
  "webhook delivery, 5 a run": use({
    workerRequests: 0,
    doActiveSeconds: laneAwakeSeconds(5),
    doStorageGbMonths: DELIVERY_STORAGE_GB_MONTHS,
    d1Queries: 0.61,
    d1RowsRead: 7.62,
    d1RowsWritten: 0,
    doRequests: 0.2,
    doRowsRead: 4.2,
    doRowsWritten: 0.21,
    subrequests: 1,
  }),
  // 20 changes in one pass.
  "webhook delivery, 20 a run": use({
    workerRequests: 0,
    doActiveSeconds: laneAwakeSeconds(20),
    doStorageGbMonths: DELIVERY_STORAGE_GB_MONTHS,
    d1Queries: 0.15,
    d1RowsRead: 3.41,
    d1RowsWritten: 0,
    doRequests: 0.05,
    doRowsRead: 1.8,
    doRowsWritten: 0.06,
    subrequests: 1,
  }),
} satisfies Record<string, OperationUse>;
export type Operation = keyof typeof OPERATION_USE;

/**
 * Rows a lane writes for a delivery that did not go through at its first try, as the counts test measures them
 * through the lane's entry points, less what the lane writes over the same days with none refused: alone in its run
 * (every per-run write its own), 5 and 20 a run; and for an endpoint disabled with events not yet sent, and for those
 * events recovered, whatever their number.
 */
export const REFUSED_ROWS = {
  onceAlone: 4,
  once5: 2.4,
  once20: 2.1,
  spentAlone: 20,
  spent5: 12,
  spent20: 10.5,
  disabled: 1,
  recovered: 3,
};

/** One change to 100 endpoints: the pass once, 100 deliveries. */
export const FAN_OUT_ENDPOINTS = 100;

/**
 * Dollars per million of an operation beyond the plan's allowances, line by line: its calls, `cpuMs` of CPU each
 * (a Worker request's; an object's CPU is in its duration), an object kept awake where that is more than a call's
 * milliseconds (a lane waiting on receivers), and the storage it keeps
 * (docs/design/performance.md#what-a-million-requests-cost).
 */
export function dollarsPerMillion(
  calls: OperationUse,
  cpuMs: number,
): { lines: Record<string, number>; total: number } {
  const lines: Record<string, number> = {
    "Worker requests": calls.workerRequests * PRICES.workerRequests.perMillion,
    "Worker CPU": calls.workerRequests * cpuMs * PRICES.cpuMs.perMillion,
    "DO requests": calls.doRequests * PRICES.doRequests.perMillion,
    "DO duration": calls.doActiveSeconds * DO_GB * PRICES.doGbSeconds.perMillion,
    "DO storage": calls.doStorageGbMonths * PRICES.doStorageGbMonths.perMillion,
    "DO rows": calls.doRowsRead * PRICES.doRowsRead.perMillion + calls.doRowsWritten * PRICES.doRowsWritten.perMillion,
    KV:
      calls.kvReads * PRICES.kvReads.perMillion +
      calls.kvWrites * PRICES.kvWrites.perMillion +
      calls.kvLists * PRICES.kvLists.perMillion,
    "D1 rows": calls.d1RowsRead * PRICES.d1RowsRead.perMillion + calls.d1RowsWritten * PRICES.d1RowsWritten.perMillion,
    "Analytics points": calls.analyticsPoints * PRICES.analyticsPoints.perMillion,
  };
  return { lines, total: Object.values(lines).reduce((sum, dollars) => sum + dollars, 0) };
}

/** A month's use of one billed unit, in millions, priced beyond its allowance. */
export const billed = (unit: keyof typeof PRICES, millions: number) =>
  Math.max(0, millions - PRICES[unit].includedMillions) * PRICES[unit].perMillion;

/**
 * A store's month (docs/design/performance.md#a-stores-month): the plans' keys at their day limits reading the cached
 * list (1,000 free keys at 1,000 a day, 100 pro at 10,000, 10 business at 100,000), 20 changes a second made through
 * the API (cancels), each delivered to 100 endpoints. Millions a month of each operation.
 */
export const STORE_MONTH: readonly { operation: Operation; millions: number }[] = [
  { operation: "cached list", millions: (30 * (1_000 * 1_000 + 100 * 10_000 + 10 * 100_000)) / 1e6 },
  { operation: "cancel", millions: (20 * 86_400 * 30) / 1e6 },
  { operation: "webhook delivery, 5 a run", millions: (20 * 86_400 * 30 * FAN_OUT_ENDPOINTS) / 1e6 },
];

/** Each billed unit's use in a month of `traffic` (millions) and its dollars beyond the plan; the plan's $5 besides. */
export function monthOf(
  traffic: readonly { operation: Operation; millions: number }[],
  cpuMs: Partial<Record<Operation, number>>,
): { units: Record<keyof typeof PRICES, { millions: number; dollars: number }>; total: number } {
  const sum = (count: (use: OperationUse, operation: Operation) => number) =>
    traffic.reduce(
      (total, { operation, millions }) => total + count(OPERATION_USE[operation], operation) * millions,
      0,
    );
  const millions: Record<keyof typeof PRICES, number> = {
    workerRequests: sum((use) => use.workerRequests),
    cpuMs: sum((use, operation) => use.workerRequests * (cpuMs[operation] ?? 0)),
    doRequests: sum((use) => use.doRequests),
    doGbSeconds: sum((use) => use.doActiveSeconds * DO_GB),
    doStorageGbMonths: sum((use) => use.doStorageGbMonths),
    doRowsRead: sum((use) => use.doRowsRead),
    doRowsWritten: sum((use) => use.doRowsWritten),
    kvReads: sum((use) => use.kvReads),
    kvWrites: sum((use) => use.kvWrites),
    kvLists: sum((use) => use.kvLists),
    d1RowsRead: sum((use) => use.d1RowsRead),
    d1RowsWritten: sum((use) => use.d1RowsWritten),
    analyticsPoints: sum((use) => use.analyticsPoints),
  };
  const units = Object.fromEntries(
    (Object.keys(PRICES) as (keyof typeof PRICES)[]).map((unit) => [
      unit,
      { millions: millions[unit], dollars: billed(unit, millions[unit]) },
    ]),
  ) as Record<keyof typeof PRICES, { millions: number; dollars: number }>;
  return { units, total: PLAN_DOLLARS_A_MONTH + Object.values(units).reduce((all, { dollars }) => all + dollars, 0) };
}
