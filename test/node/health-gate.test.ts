import { describe, expect, it } from "vitest";
import { DEFAULT_THRESHOLDS, healthQuery, judgeHealth, readHealthAnswer } from "../../scripts/lib/health-gate";
import { dataPoint, type RequestFacts } from "../../src/framework/middleware/request-analytics";
import { engineRow, runEngineSql } from "../support/analytics-engine-sql";

/**
 * The release's health gate (docs/operations.md#promotion-by-health): its
 * query run over data points as the Worker writes them, and its judgement at
 * the thresholds' edges.
 */
const NOW = Date.UTC(2026, 10, 24, 12, 0, 0);
const OLD = "0f0f0f0f-0000-4000-8000-000000000001";
const NEW = "1a1a1a1a-0000-4000-8000-000000000002";

const request = (facts: Partial<RequestFacts>): AnalyticsEngineDataPoint =>
  dataPoint({
    index: "key_1",
    versionId: OLD,
    route: "/v1/store/orders",
    method: "GET",
    status: 200,
    outcome: "admitted",
    plan: "pro",
    colo: "AMS",
    durationMs: 10,
    bytes: 100,
    ...facts,
  });

describe("the health gate's query", () => {
  it("counts requests and 5xx and takes the p99 per version, over the window only, weighted by the sample interval", () => {
    const rows = [
      // The previous version: 100 requests 1..100 ms, two 500s, one sampled point standing for 10.
      ...Array.from({ length: 99 }, (_, i) =>
        engineRow(request({ durationMs: i + 1, status: i < 2 ? 500 : 200 }), NOW - 5_000),
      ),
      engineRow(request({ durationMs: 100 }), NOW - 5_000, 10),
      // The new version: 50 requests, one 503, 40 ms each.
      ...Array.from({ length: 50 }, (_, i) =>
        engineRow(request({ versionId: NEW, durationMs: 40, status: i === 0 ? 503 : 204 }), NOW - 1_000),
      ),
      // Outside the window, and another version: not counted.
      engineRow(request({ versionId: NEW, status: 500 }), NOW - 120_000),
      engineRow(request({ versionId: "2b2b2b2b-0000-4000-8000-000000000003", status: 500 }), NOW - 1_000),
    ];
    const answer = runEngineSql(healthQuery("store_orders_requests_production", [NEW, OLD], 60), rows, NOW);
    const health = readHealthAnswer(JSON.parse(JSON.stringify(answer)), [NEW, OLD]);
    expect(health.get(OLD)).toEqual({ requests: 109, errors: 2, p99Ms: 100 });
    expect(health.get(NEW)).toEqual({ requests: 50, errors: 1, p99Ms: 40 });
  });

  it("reads numbers the SQL API quotes, and a version without rows as no requests", () => {
    const health = readHealthAnswer(
      { meta: [], data: [{ version: OLD, requests: "1200", errors: "3", p99_ms: "81.5" }], rows: 1 },
      [NEW, OLD],
    );
    expect(health.get(OLD)).toEqual({ requests: 1200, errors: 3, p99Ms: 81.5 });
    expect(health.get(NEW)).toEqual({ requests: 0, errors: 0, p99Ms: 0 });
    expect(() => readHealthAnswer({ errors: ["bad token"] }, [NEW])).toThrow(/without data/);
    expect(() => readHealthAnswer({ data: [{ version: NEW, requests: "many" }] }, [NEW])).toThrow(/not numbers/);
  });

  it("refuses a version id or a dataset that could leave the SQL's quotes", () => {
    expect(() => healthQuery("store_orders_requests_production", ["x' OR 1=1 --"], 60)).toThrow(
      /not a Worker version id/,
    );
    expect(() => healthQuery("t; DROP", [NEW], 60)).toThrow(/not a plain name/);
    expect(healthQuery("d", [NEW], 0.2)).toContain("INTERVAL '1' SECOND");
  });
});

describe("the health gate's judgement", () => {
  const old = { requests: 10_000, errors: 10, p99Ms: 100 };
  it("passes at the thresholds and fails just above: 5xx at max(2x the old, 0.5%), p99 at 1.5x + 50 ms", () => {
    expect(judgeHealth({ requests: 1_000, errors: 5, p99Ms: 200 }, old).verdict).toBe("healthy");
    expect(judgeHealth({ requests: 1_000, errors: 6, p99Ms: 200 }, old)).toMatchObject({
      verdict: "unhealthy",
      reasons: [expect.stringMatching(/5xx ratio 0.60% is above 0.50%/)],
    });
    expect(judgeHealth({ requests: 1_000, errors: 0, p99Ms: 201 }, old)).toMatchObject({
      verdict: "unhealthy",
      reasons: [expect.stringMatching(/p99 201 ms is above 200 ms/)],
    });
    // An old version at 1% errors: the new may have up to 2%.
    const noisy = { requests: 10_000, errors: 100, p99Ms: 100 };
    expect(judgeHealth({ requests: 1_000, errors: 20, p99Ms: 100 }, noisy).verdict).toBe("healthy");
    expect(judgeHealth({ requests: 1_000, errors: 21, p99Ms: 100 }, noisy).verdict).toBe("unhealthy");
  });

  it("says too little traffic below the minimum, whatever the new version's errors; judges from the minimum on", () => {
    const broken = { requests: 99, errors: 99, p99Ms: 5_000 };
    expect(judgeHealth(broken, old)).toMatchObject({
      verdict: "too little traffic",
      reasons: [expect.stringContaining("the smoke check decides")],
    });
    expect(judgeHealth({ ...broken, requests: 100 }, old).verdict).toBe("unhealthy");
    expect(judgeHealth(broken, old, { ...DEFAULT_THRESHOLDS, minRequests: 10 }).verdict).toBe("unhealthy");
  });

  it("judges a version alone on the floor when the previous one had no requests in the window", () => {
    expect(
      judgeHealth({ requests: 1_000, errors: 5, p99Ms: 9_000 }, { requests: 0, errors: 0, p99Ms: 0 }).verdict,
    ).toBe("healthy");
    expect(judgeHealth({ requests: 1_000, errors: 6, p99Ms: 10 }, { requests: 0, errors: 0, p99Ms: 0 }).verdict).toBe(
      "unhealthy",
    );
  });

  it("prints the comparison an operator reads", () => {
    expect(
      judgeHealth({ requests: 1_234, errors: 1, p99Ms: 112.4 }, { requests: 11_020, errors: 6, p99Ms: 98 }).line,
    ).toBe("new 1,234 requests, 5xx 0.08%, p99 112 ms; previous 11,020 requests, 5xx 0.05%, p99 98 ms");
  });
});
