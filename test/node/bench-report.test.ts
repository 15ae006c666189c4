import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const MB = 1024 * 1024;
import {
  DELIVERY,
  ROWS,
  SCALE,
  breakdownRowName,
  breakdownTable,
  deliveryTable,
  entryName,
  entryWorkerTable,
  evaluateFigures,
  evaluateTargets,
  floorName,
  lastRunSection,
  LAST_RUN_MARKERS,
  loadTable,
  medianRow,
  percentile,
  unexpectedWarnings,
  withLastRun,
  type DeliveryRow,
  type LoadRow,
  type ScaleRow,
} from "../../bench/report";

const loadRow = (name: string, requestsPerSecond: number, unexpected = 0): LoadRow => ({
  name,
  expected: 200,
  requestsPerSecond,
  p50: 1,
  p99: 2,
  total: 100,
  unexpected,
});

const scaleRow = (orders: number, kind: string, medianMs: number, peakRssBytes = 100 * MB): ScaleRow => ({
  name: `${orders.toLocaleString("en")} orders, ${kind}`,
  orders,
  runs: 3,
  medianMs,
  bytes: orders * 110,
  peakRssBytes,
});

describe("the benchmark report", () => {
  it("names each row that had responses it did not expect, and which, over every round", () => {
    const round = (requestsPerSecond: number, unexpectedBy: Record<string, number>) => ({
      ...loadRow(
        ROWS.keyless,
        requestsPerSecond,
        Object.values(unexpectedBy).reduce((sum, count) => sum + count, 0),
      ),
      expected: 429,
      unexpectedBy,
    });
    const keyless = medianRow([round(2000, { 401: 10 }), round(2100, {}), round(1900, { 401: 40, errors: 2 })]);
    expect(keyless.unexpected).toBe(52);
    expect(unexpectedWarnings([loadRow("bare", 5000), keyless])).toEqual([
      `WARNING: ${ROWS.keyless}: 52 responses had another status than 429 (401: 50, errors: 2)`,
    ]);
    // A row of a run that did not say which.
    expect(unexpectedWarnings([loadRow("bare", 5000, 3)])).toEqual([
      "WARNING: bare: 3 responses had another status than 200",
    ]);
  });

  it("gives each load row its ratio to both baselines", () => {
    const list = { ...loadRow("authenticated list", 900), workerdCpuMicros: 412.6, benchCpuMicros: 51.2 };
    const table = loadTable([loadRow("bare", 4000), loadRow("query", 1000), list]);
    expect(table.split("\n")[4]).toBe("| authenticated list | 900 | 1 | 2 | 0.23× | 0.90× | 413 | 51 |");
    // Rows of runs that did not measure CPU.
    expect(table.split("\n")[2]).toBe("| bare | 4000 | 1 | 2 | 1.00× | 4.00× | – | – |");
  });

  it("breaks a refused request's time down by layer: each cut's time per request minus the cut's before", () => {
    const layers = ["log", "limit"];
    // 4,000 req/s is 250 µs a request; 2,000 is 500; 1,000 is 1,000: the log adds 250 µs, the limit 500.
    // workerd's CPU a request at each cut: 150, 180 and 260 µs, so the log takes 30 of it and the limit 80.
    const cut = (index: number, requestsPerSecond: number, workerdCpuMicros: number) => ({
      ...loadRow(breakdownRowName(layers, index), requestsPerSecond),
      workerdCpuMicros,
    });
    const rows = [loadRow("bare", 5000), cut(0, 4000, 150), cut(1, 2000, 180.4), cut(2, 1000, 260.4)];
    expect(breakdownTable(rows).split("\n").slice(2)).toEqual([
      "| no layer | 4000 | 250 | – | – | – |",
      "| log (1 of 2) | 2000 | 500 | 250 | 33% | 30 |",
      "| limit (2 of 2) | 1000 | 1000 | 500 | 67% | 80 |",
    ]);
    // A run that did not measure CPU.
    expect(
      breakdownTable([loadRow(breakdownRowName(layers, 0), 4000), loadRow(breakdownRowName(layers, 1), 2000)]).split(
        "\n",
      )[3],
    ).toBe("| log (1 of 2) | 2000 | 500 | 250 | 100% | – |");
    expect(breakdownTable([loadRow("bare", 5000)])).toBe("");
  });

  it("sets each compared row against its floor or peer on the direct socket, beside the same ratio through Miniflare's entry worker, with the CPU beyond", () => {
    const cpu = (row: LoadRow, workerdCpuMicros: number) => ({ ...row, workerdCpuMicros });
    const rows = [
      loadRow("bare", 5000),
      loadRow("query", 1000),
      cpu(loadRow(ROWS.banned, 7200), 180.4),
      cpu(loadRow(floorName(ROWS.banned), 9000), 140),
      loadRow(entryName(ROWS.banned), 3000),
      loadRow(entryName(floorName(ROWS.banned)), 3300),
      loadRow(ROWS.list, 900),
      loadRow(ROWS.peerSameBytes, 1000),
    ];
    expect(entryWorkerTable(rows).split("\n").slice(2)).toEqual([
      `| ${ROWS.banned} / ${floorName(ROWS.banned)} | 0.80× | 0.91× | 40 |`,
      `| ${ROWS.list} / ${ROWS.peerSameBytes} | 0.90× | – | – |`,
    ]);
    // `--only` runs without the rows.
    expect(entryWorkerTable(rows.slice(0, 2))).toBe("");
  });

  it("takes the median round and keeps every round's unexpected responses", () => {
    const row = medianRow([loadRow("a", 300, 1), loadRow("a", 100), loadRow("a", 200, 2)]);
    expect(row.requestsPerSecond).toBe(200);
    expect(row.unexpected).toBe(3);
    expect(row.total).toBe(300);
  });

  it("reads the targets from the figures, met or missed", () => {
    const far = { ...loadRow(ROWS.farList, 700), p50: 7 };
    const floor = (name: string, requestsPerSecond: number) => loadRow(floorName(name), requestsPerSecond);
    const load = [
      loadRow("bare", 4000),
      loadRow("query", 1000),
      loadRow(ROWS.list, 860),
      far,
      { ...loadRow(ROWS.banned, 2400), workerdCpuMicros: 190.2 },
      loadRow(ROWS.bannedUnrecorded, 2600),
      loadRow(ROWS.limited, 1200),
      loadRow(ROWS.bannedNoReplay, 1500),
      loadRow(ROWS.limitedNoReplay, 1000),
      loadRow(ROWS.v2Page, 950),
      loadRow(ROWS.listUncached, 900),
      loadRow(ROWS.revalidation, 3000),
      loadRow(ROWS.peer, 782),
      loadRow(ROWS.peerLogged, 688),
      loadRow(ROWS.peerSameBytes, 800),
      loadRow(ROWS.keyless, 2000),
      loadRow(ROWS.unauthenticated, 1000),
      loadRow(ROWS.dataLogged, 920),
      { ...floor(ROWS.banned, 2500), workerdCpuMicros: 150 },
      floor(ROWS.limited, 2400),
      floor(ROWS.keyless, 2300),
      floor(ROWS.revalidation, 3500),
      floor(ROWS.unauthenticated, 2100),
      { ...loadRow(entryName(ROWS.banned), 1800) },
      { ...loadRow(entryName(floorName(ROWS.banned)), 2000) },
    ];
    const scale = [
      scaleRow(1_000, SCALE.uncached, 20),
      scaleRow(1_000, SCALE.cached, 5, 100 * MB),
      scaleRow(10_000, SCALE.uncached, 100),
      scaleRow(10_000, SCALE.cached, 30, 110 * MB),
      scaleRow(10_000, SCALE.revalidation, 19),
      scaleRow(100_000, SCALE.uncached, 1_600),
      scaleRow(100_000, SCALE.cached, 300, 170 * MB),
      scaleRow(100_000, SCALE.farD1, 3_000),
      scaleRow(100_000, SCALE.farD1Serial, 5_500),
      scaleRow(100_000, SCALE.v2Walk, 2_800),
      scaleRow(10_000, SCALE.v2Page, 4),
      scaleRow(1_000_000, SCALE.v2Page, 7),
      scaleRow(100_000, SCALE.v2StatusWalk, 1_800),
      scaleRow(100_000, SCALE.v2RangeWalk, 2_300),
      scaleRow(100_000, SCALE.v2PageOfOne, 4),
      scaleRow(100_000, SCALE.v2StatusPageOfOne, 3),
      scaleRow(10_000, SCALE.v2RangePage, 5),
      scaleRow(1_000_000, SCALE.v2RangePage, 6),
      scaleRow(10_000, SCALE.feedPage, 2),
      scaleRow(1_000_000, SCALE.feedPage, 2.5),
      scaleRow(10_000, SCALE.feedTypesPage, 2),
      scaleRow(1_000_000, SCALE.feedTypesPage, 3.2),
    ];
    const fanOut = { isolates: 4, admitted: 10_000, objectCalls: 120 };
    const delivery: DeliveryRow[] = [
      { name: DELIVERY.api, changes: 1000, perSecond: 100, delivered: 1000, p50Ms: 300, p99Ms: 1900, maxMs: 2500 },
      // 200 cancels over 10 s, in 40 passes: 4 a second.
      {
        name: DELIVERY.paced,
        changes: 200,
        perSecond: 20,
        delivered: 200,
        p50Ms: 140,
        p99Ms: 260,
        maxMs: 270,
        handedOn: { passes: 40, handOffs: 40, meanHandOff: 5, largestHandOff: 6 },
      },
      // Fast, but one change never arrived: missed.
      { name: DELIVERY.external, changes: 1000, perSecond: 100, delivered: 999, p50Ms: 900, p99Ms: 1800, maxMs: 2000 },
      // Beside a hanging receiver: every event, but too late.
      {
        name: DELIVERY.besideHanging,
        changes: 1000,
        perSecond: 100,
        delivered: 1000,
        p50Ms: 900,
        p99Ms: 5200,
        maxMs: 9000,
      },
    ];
    // One delivery of the fan-out lost: missed, whatever its pace.
    const fanOutDelivery = { endpoints: 100, events: 100, delivered: 9_999, seconds: 4, bareSeconds: 2 };
    expect(
      evaluateTargets(load, scale, fanOut, delivery, fanOutDelivery).map(({ met, detail }) => [met, detail]),
    ).toEqual([
      [false, "0.86× (stretch missed)"],
      [false, "0.86×"],
      [false, "7 ms vs 1 ms"],
      // 2,400 with the point vs 2,600 without: it costs 8%.
      [false, "0.92× (2400 vs 2600 req/s)"],
      // Issue 76's: the refusal replay stays while it buys 1.3× on the banned and limited rows.
      [true, "1.60×"],
      [false, "1.20×"],
      // Issue 43's: each refusal and the 304 against its floor (0.85×), the list against the peer writing the
      // same bytes (issue 69), the uncached list against the data baseline with the log line and point.
      [true, "0.96×, 40 µs of workerd CPU beyond it; 0.90× through the entry worker, no target"],
      [false, "0.50×"],
      [true, "0.87×"],
      [true, "0.86×"],
      [true, "1.07×"],
      [true, "0.98×"],
      [true, "0.012 (120 calls for 10000 admitted, 4 isolates)"],
      [true, "0.190× (19.0 ms vs 100.0 ms)"],
      [false, "1.60×"],
      [false, "0.300× (30.0 ms vs 100.0 ms)"],
      [false, "70.0 MB"],
      [true, "0.55× (3000 ms vs 5500 ms)"],
      [false, "1.75× (7.0 ms vs 4.0 ms)"],
      // A walk against its rows (v1's list) and a page of one per page: 2,800 / (1,600 + 100 × 4).
      [false, "1.40× (2800 ms vs 1600 ms + 100 × 4.00 ms; 1.75× v1's list alone)"],
      [true, "1.20× (6.0 ms vs 5.0 ms)"],
      [true, "0.95× (1800 ms vs 1600 ms + 100 × 3.00 ms; 1.13× v1's list alone)"],
      // The range walk against the status walk: 1.28×, over what a bounded frontier a page may cost.
      [false, "1.28× (2300 ms vs 1800 ms)"],
      [true, "1.25× (2.5 ms vs 2.0 ms)"],
      [false, "1.60× (3.2 ms vs 2.0 ms)"],
      [true, "0.95×"],
      [true, "p99 1900 ms, p50 300 ms, 1000 of 1000 delivered"],
      [true, "p99 260 ms, p50 140 ms, 200 of 200 delivered"],
      [false, "p99 1800 ms, p50 900 ms, 999 of 1000 delivered"],
      [false, "p99 5200 ms, p50 900 ms, 1000 of 1000 delivered"],
      [true, "4.0 a second; a hand-off of 5.0 events on average, 6 at most"],
      [false, "9999 of 10000 in 4.00 s (the bare loop 2.00 s)"],
    ]);
    expect(
      evaluateTargets(load, scale, fanOut)
        .slice(-3)
        .map(({ met, detail }) => [met, detail]),
    ).toEqual([
      [false, "not measured"],
      [false, "not measured"],
      [false, "not measured"],
    ]);
  });

  it("prints the retired comparisons with the bare route, the bare peer and the decided 401 as figures, never as targets", () => {
    const load = [
      loadRow("bare", 4000),
      loadRow(ROWS.banned, 2400),
      loadRow(ROWS.limited, 1200),
      loadRow(ROWS.list, 900),
      loadRow(ROWS.peerLogged, 1000),
      loadRow(ROWS.unauthenticated, 100),
      loadRow(floorName(ROWS.unauthenticated), 2000),
    ];
    const figures = evaluateFigures(load);
    expect(figures.map(({ detail }) => detail)).toEqual(["0.60×", "0.30×", "0.90×", "0.05×"]);
    expect(figures[3]!.name).toContain("docs/design/performance.md#the-401-without-a-key");
    const names = evaluateTargets(load, [])
      .map(({ name }) => name)
      .join("\n");
    expect(names).not.toContain("bare route");
    expect(names).not.toContain("401");
    const section = lastRunSection({
      date: "2026-11-27T00:00:00Z",
      machine: { node: "v20", cpus: 2, cpu: "cpu" },
      settings: { connections: 10, warmup: 1, duration: 5, rounds: 3 },
      targets: [],
      figures,
    });
    expect(section).toContain("No target:\n\n- banned key against the bare route (retired target 0.5×): 0.60×");
  });

  it("takes percentiles by nearest rank and tabulates deliveries", () => {
    const latencies = Array.from({ length: 200 }, (_, index) => index + 1);
    expect([
      percentile(latencies, 0.5),
      percentile(latencies, 0.99),
      percentile([7], 0.99),
      percentile([], 0.5),
    ]).toEqual([100, 198, 7, NaN]);
    expect(
      deliveryTable([
        { name: DELIVERY.api, changes: 10, perSecond: 100, delivered: 10, p50Ms: 40, p99Ms: 90, maxMs: 95 },
      ]).split("\n")[2],
    ).toBe(`| ${DELIVERY.api} | 10 | 100 | 10 | 40 | 90 | 95 | – |`);
    const handedOn = { passes: 8, handOffs: 8, meanHandOff: 2.5, largestHandOff: 4 };
    expect(
      deliveryTable([
        { name: DELIVERY.paced, changes: 20, perSecond: 20, delivered: 20, p50Ms: 40, p99Ms: 90, maxMs: 95, handedOn },
      ]).split("\n")[2],
    ).toBe(`| ${DELIVERY.paced} | 20 | 20 | 20 | 40 | 90 | 95 | 8, 8 (2.5, 4) |`);
  });
});

describe("the guide's last run", () => {
  it("is what the bench wrote to results.json, every target's verdict and figure", () => {
    const results = JSON.parse(readFileSync("bench/results.json", "utf8"));
    const readme = readFileSync("bench/README.md", "utf8");
    expect(withLastRun(readme, lastRunSection(results))).toBe(readme);
    for (const target of results.targets) expect(readme).toContain(`${target.name}: ${target.detail}`);
  });

  it("replaces only what lies between its markers", () => {
    const [start, end] = LAST_RUN_MARKERS;
    expect(withLastRun(`intro\n${start}\nold\n${end}\nafter`, "new")).toBe(`intro\n${start}\nnew\n${end}\nafter`);
    expect(() => withLastRun("no markers", "new")).toThrow(/markers/);
  });

  it("is short enough to be a guide", () => {
    expect(readFileSync("bench/README.md", "utf8").split("\n").length).toBeLessThan(150);
  });
});
