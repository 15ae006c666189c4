/** The benchmark's arithmetic and tables, apart from the measuring so they can be tested. */

import { dollarsPerMillion, OPERATION_USE, type Operation, type OperationUse } from "./operation-costs";

export interface LoadRow {
  name: string;
  expected: number;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  total: number;
  /** Responses with another status, errors and timeouts: the row does not measure what it says if this is not 0. */
  unexpected: number;
  /**
   * The unexpected ones by status ("errors", "timeouts" for those), summed over the rounds. Absent in runs before
   * 2026-11-26.
   */
  unexpectedBy?: Record<string, number>;
  /**
   * CPU time per response (user and system, µs), warm-up included: of the
   * workerd process (the service, Miniflare's entry worker in front of it, its
   * log writes), and of the bench's own process (the load generator, which
   * also drains workerd's log). Absent in runs before 2026-11-24.
   */
  workerdCpuMicros?: number;
  benchCpuMicros?: number;
}

export interface ScaleRow {
  name: string;
  orders: number;
  runs: number;
  medianMs: number;
  bytes: number;
  peakRssBytes: number;
}

/** Webhook deliveries of changes written at a steady rate: commit to first arrival at a local receiver. */
export interface DeliveryRow {
  name: string;
  changes: number;
  perSecond: number;
  /** Events that arrived within the row's patience; every change should. */
  delivered: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** How the changes were handed on (the paced cancels' row): the dispatcher's passes and the lane's hand-offs. */
  handedOn?: { passes: number; handOffs: number; meanHandOff: number; largestHandOff: number };
}

/**
 * One burst of changes delivered to many endpoints at once, beside the same POSTs made by a bare loop to the same
 * receivers.
 */
export interface FanOutDeliveryRow {
  endpoints: number;
  events: number;
  /** Deliveries that arrived (events × endpoints, when none is lost). */
  delivered: number;
  /** From the burst's commit to the last arrival. */
  seconds: number;
  /** The same POSTs, six at a time per receiver, from this process. */
  bareSeconds: number;
  /**
   * workerd's CPU (user and system, µs) from the burst to the last arrival, a
   * delivery: its dispatch share, its lane's run, its POST, and the local
   * D1's SQL, which Cloudflare runs outside the Worker (an upper bound).
   */
  workerdCpuMicrosPerDelivery?: number;
  /**
   * workerd's CPU (µs) of a pass handing the same events out again, per
   * event and endpoint: the dispatch's own share, its lanes adding nothing
   * (with local D1's SQL, an upper bound).
   */
  workerdCpuMicrosPerHandOff?: number;
}

export function fanOutDeliveryTable(row: FanOutDeliveryRow): string {
  const micros = (value: number | undefined) => (value === undefined ? "–" : Math.round(value));
  const perSecond = (count: number, seconds: number) => Math.round(count / seconds);
  return [
    "| Row | endpoints | deliveries | seconds | deliveries a second | the bare loop's a second | ratio | workerd CPU " +
      "µs a delivery | of it, the dispatch's µs a hand-off |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    `| ${DELIVERY.fanOut} | ${row.endpoints} | ${row.delivered} of ${row.endpoints * row.events} | ` +
      `${row.seconds.toFixed(2)} | ${perSecond(row.delivered, row.seconds)} | ` +
      `${perSecond(row.endpoints * row.events, row.bareSeconds)} | ${(row.bareSeconds / row.seconds).toFixed(2)}× | ` +
      `${micros(row.workerdCpuMicrosPerDelivery)} | ${micros(row.workerdCpuMicrosPerHandOff)} |`,
  ].join("\n");
}

export interface Target {
  name: string;
  met: boolean;
  detail: string;
}

const MB = 1024 * 1024;

/** One row from several rounds: the median round by throughput, with every round's unexpected responses. */
export function medianRow(rounds: LoadRow[]): LoadRow {
  const sorted = [...rounds].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  const median = sorted[Math.floor((sorted.length - 1) / 2)];
  if (!median) throw new Error("no rounds");
  return {
    ...median,
    total: rounds.reduce((sum, r) => sum + r.total, 0),
    unexpected: rounds.reduce((sum, r) => sum + r.unexpected, 0),
    unexpectedBy: rounds.reduce<Record<string, number>>((sum, r) => {
      for (const [status, count] of Object.entries(r.unexpectedBy ?? {})) sum[status] = (sum[status] ?? 0) + count;
      return sum;
    }, {}),
  };
}

/** Each row that had responses it did not expect, saying which: such a row does not measure what it says. */
export function unexpectedWarnings(rows: LoadRow[]): string[] {
  return rows
    .filter((row) => row.unexpected > 0)
    .map((row) => {
      const by = Object.entries(row.unexpectedBy ?? {}).map(([status, count]) => `${status}: ${count}`);
      const which = by.length > 0 ? ` (${by.join(", ")})` : "";
      return `WARNING: ${row.name}: ${row.unexpected} responses had another status than ${row.expected}${which}`;
    });
}

/** Rows 0 and 1 of the load table are the baselines: the runtime's limit and the data. */
export function loadTable(rows: LoadRow[]): string {
  const [runtime, data] = rows;
  const lines = [
    "| Row | req/s | p50 ms | p99 ms | vs bare Hono | vs list query | workerd CPU µs | bench CPU µs |",
    "|---|---:|---:|---:|---:|---:|---:|---:|",
  ];
  const micros = (value: number | undefined) => (value === undefined ? "–" : String(Math.round(value)));
  for (const row of rows) {
    lines.push(
      `| ${row.name} | ${Math.round(row.requestsPerSecond)} | ${row.p50} | ${row.p99} | ` +
        `${ratio(row.requestsPerSecond, runtime?.requestsPerSecond)} | ` +
        `${ratio(row.requestsPerSecond, data?.requestsPerSecond)} | ` +
        `${micros(row.workerdCpuMicros)} | ${micros(row.benchCpuMicros)} |`,
    );
  }
  return lines.join("\n");
}

export function scaleTable(rows: ScaleRow[]): string {
  const lines = ["| Row | median ms | µs per order | bytes | workerd peak RSS MB |", "|---|---:|---:|---:|---:|"];
  for (const row of rows) {
    const perOrder = row.orders > 0 ? ((row.medianMs * 1000) / row.orders).toFixed(2) : "–";
    lines.push(
      `| ${row.name} | ${row.medianMs.toFixed(1)} | ${perOrder} | ${row.bytes} | ` +
        `${(row.peakRssBytes / MB).toFixed(1)} |`,
    );
  }
  return lines.join("\n");
}

/** Nearest rank: the smallest value at least a fraction `p` of `sorted` is at or below. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
}

export function deliveryTable(rows: DeliveryRow[]): string {
  const lines = [
    "| Row | changes | a second | delivered | p50 ms | p99 ms | max ms | passes, hand-offs (mean, largest) |",
    "|---|---:|---:|---:|---:|---:|---:|---|",
  ];
  for (const row of rows) {
    const handed = row.handedOn
      ? `${row.handedOn.passes}, ${row.handedOn.handOffs} (${row.handedOn.meanHandOff.toFixed(1)}, ` +
        `${row.handedOn.largestHandOff})`
      : "–";
    lines.push(
      `| ${row.name} | ${row.changes} | ${row.perSecond} | ${row.delivered} | ${row.p50Ms} | ${row.p99Ms} | ` +
        `${row.maxMs} | ${handed} |`,
    );
  }
  return lines.join("\n");
}

/** One caller driven through several isolates: what it cost in calls to its limiter object. */
export interface FanOut {
  isolates: number;
  admitted: number;
  objectCalls: number;
}

/** Load row names the targets read. */
export const ROWS = {
  bare: "bare Hono `[]` (runtime limit)",
  data: "list query alone, 100 orders (data baseline)",
  dataLogged: "list query alone, with the request log and analytics point (data baseline as deployed)",
  list: "authenticated list, 100 orders",
  listUncached: "authenticated list, 100 orders, cache off",
  farList: "limiter 50 ms away: authenticated list, 100 orders",
  v2Page: "v2 page of 100, status=pending",
  revalidation: "304 revalidation, 100 orders",
  unauthenticated: "401, no key",
  keyless: "429, no key, many addresses in one /64",
  limited: "429, limited key",
  banned: "429, banned key",
  limitedNoReplay: "429, limited key, without the refusal replay",
  bannedNoReplay: "429, banned key, without the refusal replay",
  bannedUnrecorded: "429, banned key, without the analytics point",
  peer: "peer: list behind Cloudflare's rate limiting binding",
  peerLogged: "peer, with the request log and analytics point as deployed",
  peerSameBytes: "peer writing the same bytes (its CORS and rate-limit fields too)",
} as const;

/** A row's floor: its response replayed, its log line and point written, nothing computed (bench/worker.ts). */
export const floorName = (row: string) => `floor: ${row}`;
/** A row through Miniflare's entry worker; every other row runs on the direct socket, as Cloudflare runs the Worker. */
export const entryName = (row: string) => `${row} [through the entry worker]`;

/** Each row the targets compare, with what it is compared with. */
const COMPARED: readonly (readonly [string, string])[] = [
  ...[ROWS.banned, ROWS.limited, ROWS.keyless, ROWS.revalidation, ROWS.unauthenticated].map(
    (name) => [name, floorName(name)] as const,
  ),
  [ROWS.list, ROWS.peerSameBytes],
  [ROWS.listUncached, ROWS.dataLogged],
];

/**
 * The ratios the targets read, each on the direct socket beside the same
 * ratio through Miniflare's entry worker, which Cloudflare does not run (no
 * target), and the CPU each response costs workerd beyond what it is
 * compared with. Empty when the rows were not run.
 */
export function entryWorkerTable(rows: LoadRow[]): string {
  const row = (name: string) => rows.find((candidate) => candidate.name === name);
  const lines = [
    "| Row / what it is compared with | direct socket | through the entry worker | workerd CPU µs beyond, direct |",
    "|---|---:|---:|---:|",
  ];
  for (const [measured, against] of COMPARED) {
    const [direct, directBase, entry, entryBase] = [
      row(measured),
      row(against),
      row(entryName(measured)),
      row(entryName(against)),
    ];
    if (!direct || !directBase) continue;
    lines.push(
      `| ${measured} / ${against} | ${ratio(direct.requestsPerSecond, directBase.requestsPerSecond)} | ` +
        `${entry && entryBase ? ratio(entry.requestsPerSecond, entryBase.requestsPerSecond) : "–"} | ` +
        `${cpuBeyond(direct, directBase)} |`,
    );
  }
  return lines.length > 2 ? lines.join("\n") : "";
}

/** The workerd CPU µs a response costs beyond another's, where both were measured. */
const cpuBeyond = (row: LoadRow, base: LoadRow) =>
  row.workerdCpuMicros !== undefined && base.workerdCpuMicros !== undefined
    ? String(Math.round(row.workerdCpuMicros - base.workerdCpuMicros))
    : "–";

/** The breakdown rows: the per-request chain cut after each layer (bench/worker.ts), named by the last layer kept. */
export const BREAKDOWN = "breakdown: a bare 429 after ";
export const breakdownRowName = (layers: readonly string[], cut: number) =>
  `${BREAKDOWN}${cut === 0 ? "no layer" : `${layers[cut - 1]} (${cut} of ${layers.length})`}`;

/**
 * Each layer's share of a refused request: the time a request takes at each
 * cut (1 / throughput, the machine's cores being the limit at 10
 * connections) minus the time at the cut before; and the same difference in
 * workerd's CPU per request, where the run measured it.
 */
export function breakdownTable(rows: LoadRow[]): string {
  const cuts = rows.filter((row) => row.name.startsWith(BREAKDOWN));
  if (cuts.length === 0) return "";
  const micros = (row: LoadRow) => 1e6 / row.requestsPerSecond;
  const total = micros(cuts.at(-1)!) - micros(cuts[0]!);
  const cpuShare = (row: LoadRow, before: LoadRow | undefined) =>
    before?.workerdCpuMicros === undefined || row.workerdCpuMicros === undefined
      ? "–"
      : String(Math.round(row.workerdCpuMicros - before.workerdCpuMicros));
  const lines = [
    "| Layer added | req/s | µs per request | its share, µs | of the chain's cost | its share of workerd CPU, µs |",
    "|---|---:|---:|---:|---:|---:|",
  ];
  cuts.forEach((row, i) => {
    const share = i === 0 ? NaN : micros(row) - micros(cuts[i - 1]!);
    lines.push(
      `| ${row.name.slice(BREAKDOWN.length)} | ${Math.round(row.requestsPerSecond)} | ${Math.round(micros(row))} | ` +
        `${i === 0 ? "–" : Math.round(share)} | ` +
        `${i === 0 ? "–" : `${Math.round((share / total) * 100)}%`} | ${cpuShare(row, cuts[i - 1])} |`,
    );
  });
  return lines.join("\n");
}

/** A walk's time over the time of its rows and of its pages' fixed costs, measured apart: at most this. */
export const WALK_BOUND = 1.25;
/** Orders on each page of a walk. */
export const WALK_PAGE = 1_000;

/** What each scale row measures, after "N orders, "; the targets find rows by it. */
export const SCALE = {
  uncached: "full list, cache off",
  cached: "full list, from the cache",
  revalidation: "304 revalidation",
  v2Page: "v2 page of 100 status=pending (a quarter pending)",
  v2Walk: "v2 walk of every order, pages of 1,000",
  v2RangeWalk: "v2 walk of every order, status=pending and a ship date range covering all, pages of 1,000",
  // The range walk is judged against it: the same pages through the same index, without the range.
  v2StatusWalk: "v2 walk of every order, status=pending, pages of 1,000",
  // What each walk pays a page besides its rows: a request, its chain, its statement, its cursor and ETag.
  v2PageOfOne: "v2 page of 1 after a cursor",
  v2StatusPageOfOne: "v2 page of 1 status=pending after a cursor",
  v2RangePage: "v2 page of 100, a ship date range covering every order",
  feedPage: "event feed page of 100 (as many events as orders)",
  feedTypesPage: "event feed page of 100, types=order.created,order.cancelled (as many events as orders)",
  farD1: "D1 50 ms away, read-ahead 1",
  farD1Serial: "D1 50 ms away, no read-ahead",
} as const;

/** The delivery rows the targets read. */
export const DELIVERY = {
  api: "webhook: cancels through the API",
  paced: "webhook: 20 cancels a second through the API",
  external: "webhook: updates written to D1 by another system",
  besideHanging: "webhook: updates to a healthy endpoint beside one whose receiver hangs",
  fanOut: "webhook fan-out: one burst of changes to 100 endpoints",
} as const;

/** The targets, read from one run's figures. */
/**
 * One row's throughput over another's, with the workerd CPU it costs beyond it and the same ratio through the entry
 * worker.
 */
function comparison(load: LoadRow[], measured: string, against: string): { value: number; detail: string } {
  const row = (name: string) => load.find((candidate) => candidate.name === name);
  const [m, a] = [row(measured), row(against)];
  const value = (m?.requestsPerSecond ?? NaN) / (a?.requestsPerSecond ?? NaN);
  const beyond =
    m?.workerdCpuMicros !== undefined && a?.workerdCpuMicros !== undefined
      ? `, ${cpuBeyond(m, a)} µs of workerd CPU beyond it`
      : "";
  const [em, ea] = [row(entryName(measured)), row(entryName(against))];
  const entry =
    em && ea
      ? `; ${(em.requestsPerSecond / ea.requestsPerSecond).toFixed(2)}× through the entry worker, no target`
      : "";
  return { value, detail: `${value.toFixed(2)}×${beyond}${entry}` };
}

/** A figure the report prints with no target: a comparison retired, or a cost decided (each names why). */
export interface Figure {
  name: string;
  detail: string;
}

/**
 * What is printed beside the targets and judged by none: the refusals
 * against the bare route (retired: its two bytes and three headers are not a
 * 429's; the floors replaced it), and the 401 without a key, whose cost is a
 * decision (docs/design/performance.md#the-401-without-a-key).
 */
export function evaluateFigures(load: LoadRow[]): Figure[] {
  const bare = load[0];
  const vsBare = (name: string) =>
    `${((load.find((row) => row.name === name)?.requestsPerSecond ?? NaN) / (bare?.requestsPerSecond ?? NaN)).toFixed(
      2,
    )}×`;
  return [
    { name: "banned key against the bare route (retired target 0.5×)", detail: vsBare(ROWS.banned) },
    { name: "limited key against the bare route (retired target 0.32×)", detail: vsBare(ROWS.limited) },
    {
      name: "authenticated list against the peer as deployed, without the CORS and rate-limit fields (a figure)",
      detail: comparison(load, ROWS.list, ROWS.peerLogged).detail,
    },
    {
      name:
        "401 without a key against its floor: counted exactly, in an object per address group, a zone rule " +
        "upstream (decided: docs/design/performance.md#the-401-without-a-key)",
      detail: comparison(load, ROWS.unauthenticated, floorName(ROWS.unauthenticated)).detail,
    },
  ];
}

export function evaluateTargets(
  load: LoadRow[],
  scale: ScaleRow[],
  fanOut?: FanOut,
  delivery: DeliveryRow[] = [],
  fanOutDelivery?: FanOutDeliveryRow,
): Target[] {
  const [, data] = load;
  const row = (name: string) => load.find((candidate) => candidate.name === name);
  const list = row(ROWS.list);
  const sized = (orders: number, kind: string) =>
    scale.find((row) => row.name === `${orders.toLocaleString("en")} orders, ${kind}`);
  const full = (orders: number) => sized(orders, SCALE.uncached);
  const revalidation = scale.find((row) => row.name.endsWith(SCALE.revalidation));
  const perOrder = (row: ScaleRow | undefined) => (row ? row.medianMs / row.orders : NaN);
  const targets: Target[] = [];

  const throughput = list && data ? list.requestsPerSecond / data.requestsPerSecond : NaN;
  targets.push({
    name: "authenticated list ≥ 0.90× the data baseline's throughput (stretch: 0.95×)",
    met: throughput >= 0.9,
    detail: `${throughput.toFixed(2)}× (stretch ${throughput >= 0.95 ? "met" : "missed"})`,
  });
  targets.push({
    name:
      "stretch: the authenticated list (from the cache) ≥ 1.0× the data baseline, faster than the query it " +
      "replaces",
    met: throughput >= 1,
    detail: `${throughput.toFixed(2)}×`,
  });

  const far = row(ROWS.farList);
  const gap = far && data ? far.p50 - data.p50 : NaN;
  targets.push({
    name: "with every limiter call 50 ms away, the authenticated list's p50 within 5 ms of the data baseline's",
    met: gap <= 5,
    detail: `${far?.p50} ms vs ${data?.p50} ms`,
  });

  const [banned, unrecorded] = [row(ROWS.banned), row(ROWS.bannedUnrecorded)];
  const recorded = (banned?.requestsPerSecond ?? NaN) / (unrecorded?.requestsPerSecond ?? NaN);
  targets.push({
    name: "the request analytics point costs the banned row at most 5% (with it ≥ 0.95× without it, side by side)",
    met: recorded >= 0.95,
    detail:
      `${recorded.toFixed(2)}× (${Math.round(banned?.requestsPerSecond ?? NaN)} vs ` +
      `${Math.round(unrecorded?.requestsPerSecond ?? NaN)} req/s)`,
  });

  // Issue 43: each response against what writes the same bytes, log line and point; the list against the peer as
  // deployed.
  const compared = (measured: string, against: string, bound: number, label: string) => {
    const { value, detail } = comparison(load, measured, against);
    targets.push({ name: `${label} ≥ ${bound.toFixed(2)}×`, met: value >= bound, detail });
  };
  // Issue 76: the refusal replay before identification stays only while it buys this, side by side.
  compared(ROWS.banned, ROWS.bannedNoReplay, 1.3, "429 banned key with the refusal replay against without it");
  compared(ROWS.limited, ROWS.limitedNoReplay, 1.3, "429 limited key with the refusal replay against without it");
  compared(ROWS.banned, floorName(ROWS.banned), 0.85, "429 banned key against its floor");
  compared(ROWS.limited, floorName(ROWS.limited), 0.85, "429 limited key against its floor");
  compared(ROWS.keyless, floorName(ROWS.keyless), 0.85, "429 without a key, one /64, against its floor");
  compared(ROWS.revalidation, floorName(ROWS.revalidation), 0.85, "304 revalidation of the list against its floor");
  // Issue 69: against the peer that writes the same bytes; the peer without those fields is a figure.
  compared(
    ROWS.list,
    ROWS.peerSameBytes,
    1,
    "authenticated list (cache on) against the peer writing the same bytes (its CORS and rate-limit fields, its log " +
      "line and point)",
  );
  compared(
    ROWS.listUncached,
    ROWS.dataLogged,
    0.95,
    "authenticated list, cache off, against the data baseline with the log line and point",
  );

  const perAdmission = fanOut ? fanOut.objectCalls / fanOut.admitted : NaN;
  targets.push({
    name: "one enterprise key from several isolates: object calls per admitted request ≤ 0.1",
    met: perAdmission <= 0.1,
    detail: fanOut
      ? `${perAdmission.toFixed(3)} (${fanOut.objectCalls} calls for ${fanOut.admitted} admitted, ${fanOut.isolates} ` +
        `isolates)`
      : "not measured",
  });

  const conditional = revalidation && full(10_000) ? revalidation.medianMs / full(10_000)!.medianMs : NaN;
  targets.push({
    name: "304 of 10,000 orders < 1/5 of the full 10,000 list's time",
    met: conditional < 0.2,
    detail:
      `${conditional.toFixed(3)}× (${revalidation?.medianMs.toFixed(1)} ms vs ` +
      `${full(10_000)?.medianMs.toFixed(1)} ms)`,
  });

  const growth = perOrder(full(100_000)) / perOrder(full(10_000));
  targets.push({
    name: "time per order at 100,000 ≤ 1.5× that at 10,000",
    met: growth <= 1.5,
    detail: `${growth.toFixed(2)}×`,
  });

  const cachedVsUncached = (sized(10_000, SCALE.cached)?.medianMs ?? NaN) / (full(10_000)?.medianMs ?? NaN);
  targets.push({
    name: "a cached 200 of 10,000 orders ≤ 1/4 the time of an uncached one",
    met: cachedVsUncached <= 0.25,
    detail:
      `${cachedVsUncached.toFixed(3)}× (${sized(10_000, SCALE.cached)?.medianMs.toFixed(1)} ms vs ` +
      `${full(10_000)?.medianMs.toFixed(1)} ms)`,
  });

  // The cached rows carry the peak of their whole size: uncached lists, the miss that filled the cache and the hits.
  const memory =
    (sized(100_000, SCALE.cached)?.peakRssBytes ?? NaN) - (sized(1_000, SCALE.cached)?.peakRssBytes ?? NaN);
  targets.push({
    name: "workerd peak memory grows < 64 MB from 1,000 to 100,000 orders, cache on (misses, fills and hits)",
    met: memory < 64 * MB,
    detail: `${(memory / MB).toFixed(1)} MB`,
  });

  /** A time over another, at most `bound`; the detail names both, and `base` how the second was made up. */
  const ratioTarget = (
    name: string,
    bound: number,
    measuredMs: number,
    baselineMs: number,
    digits: number,
    base = "",
    after = "",
  ) => {
    const value = measuredMs / baselineMs;
    targets.push({
      name,
      met: value <= bound,
      detail:
        `${value.toFixed(2)}× (${measuredMs.toFixed(digits)} ms vs ` +
        `${base || `${baselineMs.toFixed(digits)} ms`}${after})`,
    });
  };
  /** A scale row's time over another's, at most `bound`. */
  const timeRatio = (
    name: string,
    bound: number,
    measured: ScaleRow | undefined,
    baseline: ScaleRow | undefined,
    digits: number,
  ) => ratioTarget(name, bound, measured?.medianMs ?? NaN, baseline?.medianMs ?? NaN, digits);
  timeRatio(
    "100,000 orders with D1 50 ms away: read-ahead ≤ 0.6× the time without",
    0.6,
    sized(100_000, SCALE.farD1),
    sized(100_000, SCALE.farD1Serial),
    0,
  );
  timeRatio(
    "v2: a page of 100 status=pending among 1,000,000 orders ≤ 1.5× its time among 10,000",
    1.5,
    sized(1_000_000, SCALE.v2Page),
    sized(10_000, SCALE.v2Page),
    1,
  );
  /**
   * A walk against what it must read (docs/design/performance.md#why-the-other-targets-are-what-they-are):
   * the rows, as v1's uncached list reads them, and a page's fixed cost once per page, as a page of one pays it.
   */
  const walkTarget = (name: string, walk: ScaleRow | undefined, pageOfOne: ScaleRow | undefined) => {
    const v1 = full(100_000)?.medianMs ?? NaN;
    const pages = (walk?.orders ?? NaN) / WALK_PAGE;
    const walkMs = walk?.medianMs ?? NaN;
    const pageMs = pageOfOne?.medianMs ?? NaN;
    ratioTarget(
      `${name} ≤ ${WALK_BOUND}× what it reads: v1's uncached full list, and a page of one for each of its pages`,
      WALK_BOUND,
      walkMs,
      v1 + pages * pageMs,
      0,
      `${v1.toFixed(0)} ms + ${pages} × ${pageMs.toFixed(2)} ms`,
      `; ${(walkMs / v1).toFixed(2)}× v1's list alone`,
    );
  };
  walkTarget(
    "v2: walking all 100,000 orders in pages of 1,000",
    sized(100_000, SCALE.v2Walk),
    sized(100_000, SCALE.v2PageOfOne),
  );
  timeRatio(
    "v2: a page of 100 with a ship date range covering every order, among 1,000,000 orders ≤ 1.5× its time among " +
      "10,000",
    1.5,
    sized(1_000_000, SCALE.v2RangePage),
    sized(10_000, SCALE.v2RangePage),
    1,
  );
  // A filtered walk reads each order through its status index, then per page a range's bounded frontier.
  walkTarget(
    "v2: walking 100,000 orders with status=pending, pages of 1,000,",
    sized(100_000, SCALE.v2StatusWalk),
    sized(100_000, SCALE.v2StatusPageOfOne),
  );
  timeRatio(
    "v2: walking them with a wide ship date range as well ≤ 1.25× the walk with the status alone (the range's own " +
      "cost: a bounded frontier a page)",
    1.25,
    sized(100_000, SCALE.v2RangeWalk),
    sized(100_000, SCALE.v2StatusWalk),
    0,
  );
  timeRatio(
    "events: a feed page of 100 among 1,000,000 events ≤ 1.5× its time among 10,000",
    1.5,
    sized(1_000_000, SCALE.feedPage),
    sized(10_000, SCALE.feedPage),
    1,
  );
  timeRatio(
    "events: a feed page of 100 with two types among 1,000,000 events ≤ 1.5× its time among 10,000",
    1.5,
    sized(1_000_000, SCALE.feedTypesPage),
    sized(10_000, SCALE.feedTypesPage),
    1,
  );
  const v2Page = row(ROWS.v2Page);
  const v2VsData = v2Page && data ? v2Page.requestsPerSecond / data.requestsPerSecond : NaN;
  targets.push({
    name:
      "v2: a filtered page of 100 (key, limits, log included) ≥ 0.9× the data baseline's throughput, as the v1 " +
      "list's target",
    met: v2VsData >= 0.9,
    detail: `${v2VsData.toFixed(2)}×`,
  });

  // Every change must arrive: a row that lost one misses its target whatever its percentiles.
  for (const [name, boundMs] of [
    [DELIVERY.api, 2_000],
    [DELIVERY.paced, 2_000],
    [DELIVERY.external, 5_000],
    [DELIVERY.besideHanging, 5_000],
  ] as const) {
    const measured = delivery.find((candidate) => candidate.name === name);
    targets.push({
      name: `${name}: every event at a local receiver, p99 from commit to receipt ≤ ${boundMs / 1000} s`,
      met: measured !== undefined && measured.delivered === measured.changes && measured.p99Ms <= boundMs,
      detail: measured
        ? `p99 ${measured.p99Ms} ms, p50 ${measured.p50Ms} ms, ${measured.delivered} of ${measured.changes} delivered`
        : "not measured",
    });
  }
  const paced = delivery.find((candidate) => candidate.name === DELIVERY.paced);
  const passesASecond = paced?.handedOn ? paced.handedOn.passes / (paced.changes / paced.perSecond) : NaN;
  targets.push({
    name: `${DELIVERY.paced}: the dispatcher runs at most 5 passes a second (its nudges spaced: NUDGE_GAP_MS)`,
    met: passesASecond <= 5,
    detail: paced?.handedOn
      ? `${passesASecond.toFixed(1)} a second; a hand-off of ${paced.handedOn.meanHandOff.toFixed(1)} events on ` +
        `average, ${paced.handedOn.largestHandOff} at most`
      : "not measured",
  });
  if (fanOutDelivery) {
    const expected = fanOutDelivery.endpoints * fanOutDelivery.events;
    targets.push({
      name:
        `${DELIVERY.fanOut}: every delivery arrives (its pace beside a bare POST loop is printed, not a target: ` +
        `docs/design/order-events.md#capacity)`,
      met: fanOutDelivery.delivered === expected,
      detail:
        `${fanOutDelivery.delivered} of ${expected} in ${fanOutDelivery.seconds.toFixed(2)} s (the bare loop ` +
        `${fanOutDelivery.bareSeconds.toFixed(2)} s)`,
    });
  }
  return targets;
}

function ratio(value: number, baseline: number | undefined): string {
  return baseline ? `${(value / baseline).toFixed(2)}×` : "–";
}

/** What `npm run bench` writes to results.json. */
export interface BenchResults {
  date: string;
  machine: { node: string; cpus: number; cpu: string };
  settings: { connections: number; warmup: number; duration: number; rounds: number };
  targets: Target[];
  /** Printed beside the targets, judged by none (evaluateFigures); absent from runs before they were split out. */
  figures?: Figure[];
}

/** Where bench/README.md's last run begins and ends: the bench rewrites what lies between. */
export const LAST_RUN_MARKERS = [
  "<!-- last run: written by npm run bench from results.json -->",
  "<!-- end of last run -->",
] as const;

/** bench/README.md's "Last run": the machine, the settings and every target's verdict and figure, from results.json. */
export function lastRunSection({ date, machine, settings, targets, figures = [] }: BenchResults): string {
  return [
    `${date.slice(0, 10)}: ${machine.cpus} cores (${machine.cpu}), Node ${machine.node}; ${settings.connections} ` +
      `connections, ` +
      `${settings.warmup} s warm-up, ${settings.duration} s per row, median of ${settings.rounds} rounds. ` +
      `Every row's ` +
      `` +
      `` +
      `figures: [results.json](results.json).`,
    "",
    ...targets.map((target) => `- ${target.met ? "met" : "**MISSED**"}: ${target.name}: ${target.detail}`),
    ...(figures.length > 0
      ? ["", "No target:", "", ...figures.map((figure) => `- ${figure.name}: ${figure.detail}`)]
      : []),
  ].join("\n");
}

/** The README with its last run replaced by `section`. */
export function withLastRun(readme: string, section: string): string {
  const [start, end] = LAST_RUN_MARKERS;
  const from = readme.indexOf(start);
  const to = readme.indexOf(end);
  if (from < 0 || to < from) throw new Error("bench/README.md has lost its last run's markers");
  return `${readme.slice(0, from + start.length)}\n${section}\n${readme.slice(to)}`;
}

/** Where each priced operation's CPU comes from: its load row, or none measured (priced without CPU, and said so). */
const CPU_ROW: Record<Operation, string | undefined> = {
  "cached list": ROWS.list,
  "uncached list": ROWS.listUncached,
  "v2 page of 100": ROWS.v2Page,
  cancel: "cancel (DELETE, one D1 batch)",
  "event feed page": undefined,
  "429 limited key": ROWS.limited,
  "429 banned key": ROWS.banned,
  "401, a new /64 each": ROWS.unauthenticated,
  "401, one address": undefined,
  "webhook delivery": undefined,
  "webhook delivery, 5 a run": undefined,
  "webhook delivery, 20 a run": undefined,
};

const CALL_NAMES: Record<keyof OperationUse, string> = {
  workerRequests: "Worker request",
  doActiveSeconds: "s of a lane awake (assumed)",
  doStorageGbMonths: "GB-months of lane storage",
  kvReads: "KV reads",
  kvWrites: "KV writes",
  kvLists: "KV lists",
  d1Queries: "D1 queries",
  d1RowsRead: "D1 rows read",
  d1RowsWritten: "D1 rows written",
  doRequests: "DO requests",
  doRowsRead: "DO rows read",
  doRowsWritten: "DO rows written",
  analyticsPoints: "AE points",
  cacheOps: "cache ops",
  subrequests: "subrequests",
};

export interface OperationCost {
  operation: Operation;
  /** workerd's CPU per response in this run, ms (an upper bound: locally it also runs D1's SQL and the objects). */
  cpuMs: number | null;
  dollarsPerMillion: number;
  /** The line that costs most. */
  largest: string;
  /** A delivery's rows written in its lane, as billed. */
  rowsWritten?: number;
}

/** Each operation's dollars per million at Workers Paid's list prices, from its counted calls and this run's CPU. */
export function operationCosts(load: LoadRow[], fanOutDelivery?: FanOutDeliveryRow): OperationCost[] {
  return (Object.keys(OPERATION_USE) as Operation[]).map((operation) => {
    const row = CPU_ROW[operation];
    const micros = operation.startsWith("webhook delivery")
      ? fanOutDelivery?.workerdCpuMicrosPerDelivery
      : row === undefined
        ? undefined
        : load.find((candidate) => candidate.name === row)?.workerdCpuMicros;
    const cpuMs = micros === undefined ? null : micros / 1000;
    const { lines, total } = dollarsPerMillion(OPERATION_USE[operation], cpuMs ?? 0);
    const [largest] = Object.entries(lines).sort(([, a], [, b]) => b - a);
    const delivery = operation.startsWith("webhook delivery");
    return {
      operation,
      cpuMs,
      dollarsPerMillion: total,
      largest: largest![0],
      ...(delivery && { rowsWritten: OPERATION_USE[operation].doRowsWritten }),
    };
  });
}

export function costTable(costs: OperationCost[]): string {
  const header =
    "| Operation | Calls per request (counted) | workerd CPU, ms | $ a million (beyond the plan) | Largest line |\n" +
    "|---|---|---:|---:|---|";
  return [
    header,
    ...costs.map(({ operation, cpuMs, dollarsPerMillion: dollars, largest }) => {
      const calls = Object.entries(OPERATION_USE[operation])
        .filter(([, count]) => count !== 0)
        .map(([name, count]) => `${count} ${CALL_NAMES[name as keyof OperationUse]}`)
        .join(", ");
      const cpu = cpuMs === null ? "not measured" : cpuMs.toFixed(3);
      return `| ${operation} | ${calls} | ${cpu} | $${dollars.toFixed(2)} | ${largest} |`;
    }),
  ].join("\n");
}
