import { describe, expect, it } from "vitest";
import { costTable, operationCosts, ROWS, type LoadRow } from "../../../bench/report";
import { billed, dollarsPerMillion, noCalls, OPERATION_USE, PRICES } from "../../../bench/operation-costs";

/** The pricing arithmetic of the cost table (docs/design/performance.md#what-a-million-requests-cost). */
describe("what a million requests cost", () => {
  it("prices each call at Workers Paid's list, line by line", () => {
    const calls = { ...noCalls(), doRowsRead: 20, doRowsWritten: 8, d1RowsRead: 400, d1RowsWritten: 10, doRequests: 2 };
    const use = {
      ...calls,
      workerRequests: 1,
      doActiveSeconds: 0,
      doStorageGbMonths: 0,
      kvReads: 1,
      analyticsPoints: 1,
    };
    const { lines, total } = dollarsPerMillion(use, 0.5);
    expect(lines).toEqual({
      "Worker requests": 0.3,
      "Worker CPU": 0.01,
      "DO requests": 0.3,
      "DO duration": 0,
      "DO storage": 0,
      "DO rows": 20 * 0.001 + 8,
      KV: 0.5,
      "D1 rows": 400 * 0.001 + 10,
      "Analytics points": 0.25,
    });
    expect(total).toBeCloseTo(0.3 + 0.01 + 0.3 + 8.02 + 0.5 + 10.4 + 0.25, 10);
  });

  it("charges a delivery no Worker request and no Worker CPU, and its lane's duration and storage", () => {
    const { lines } = dollarsPerMillion(OPERATION_USE["webhook delivery, 5 a run"], 1);
    expect(lines["Worker requests"]).toBe(0);
    expect(lines["Worker CPU"]).toBe(0);
    // 50 ms shared by the run's five POSTs in flight, at 128 MB: $0.016 a million.
    expect(lines["DO duration"]).toBeCloseTo((0.05 / 5) * 0.128 * 12.5, 10);
    // Its log entry, 90 bytes, kept a week: about $0.0042 a million.
    expect(lines["DO storage"]).toBeCloseTo(90e-9 * (7 / 30) * 0.2 * 1e6, 10);
  });

  it("bills a month's use beyond what the plan includes", () => {
    expect(billed("workerRequests", 9)).toBe(0);
    expect(billed("workerRequests", 110)).toBeCloseTo(30, 10);
    expect(billed("doRowsWritten", 50 + PRICES.doRowsWritten.includedMillions)).toBeCloseTo(50, 10);
  });

  it("tabulates every counted operation with this run's CPU, or says it was not measured", () => {
    const row = (name: string, workerdCpuMicros: number) =>
      ({ name, expected: 200, requestsPerSecond: 1, p50: 0, p99: 0, workerdCpuMicros }) as unknown as LoadRow;
    const costs = operationCosts([row(ROWS.list, 500), row(ROWS.banned, 200)], {
      endpoints: 100,
      events: 100,
      delivered: 10_000,
      seconds: 1,
      bareSeconds: 1,
      workerdCpuMicrosPerDelivery: 1_000,
    });
    expect(costs.map(({ operation }) => operation)).toEqual(Object.keys(OPERATION_USE));
    expect(costs.find(({ operation }) => operation === "cached list")).toMatchObject({
      cpuMs: 0.5,
      largest: "Worker requests",
    });
    expect(costs.find(({ operation }) => operation === "cancel")).toMatchObject({ cpuMs: null, largest: "D1 rows" });
    expect(costs.find(({ operation }) => operation === "webhook delivery")).toMatchObject({
      cpuMs: 1,
      largest: "DO rows",
    });
    const table = costTable(costs).split("\n");
    expect(table).toHaveLength(2 + costs.length);
    expect(table[2]).toBe(
      "| cached list | 1 D1 queries, 1 D1 rows read, 1 AE points, 1 cache ops, 1 Worker request | 0.500 | $0.56 | " +
        "Worker requests |",
    );
  });
});
