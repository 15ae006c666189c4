import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import operations from "../../../docs/operations.md?raw";
import { healthQuery, readHealthAnswer } from "../../../scripts/lib/health-gate";
import { BLOB_COLUMNS, DOUBLE_COLUMNS, outcomeOf } from "../../../src/framework/middleware/request-analytics";
import { engineRow, runEngineSql } from "../../support/analytics-engine-sql";
import { apiWith } from "../../support/request";
import { failingD1 } from "../../support/faults";
import { seedOrders } from "../../support/seed";
import { storeTestKey } from "../../support/test-keys";
import { inOneInstant } from "../../support/limits-clock";

/**
 * The request analytics point (docs/operations.md#request-analytics): every
 * kind of response writes exactly one, with the account (never the key) as
 * its index. Locally the runtime drops these writes, so a recording stand-in
 * takes the binding's place.
 */
function recording() {
  const points: AnalyticsEngineDataPoint[] = [];
  const dataset: AnalyticsEngineDataset = { writeDataPoint: (point) => void points.push(point ?? {}) };
  const named = (): Record<string, unknown>[] =>
    points.map((point) => ({
      index: point.indexes?.[0],
      ...Object.fromEntries(BLOB_COLUMNS.map((name, i) => [name, point.blobs?.[i]])),
      ...Object.fromEntries(DOUBLE_COLUMNS.map((name, i) => [name, point.doubles?.[i]])),
    }));
  return { points, named, env: { ...env, REQUESTS: dataset } as Env };
}

describe("the request analytics point", () => {
  it("leaves a long poll's held wait out of the duration the health gate judges, and the log line says how long it held", async () => {
    const key = await storeTestKey({ plan: "pro" });
    // From the feed's head: nothing comes, so the poll holds for its whole wait.
    let after = "";
    for (;;) {
      const page = await (
        await apiWith(env, `/v2/store/order-events?limit=1000${after && `&after=${encodeURIComponent(after)}`}`, {
          key: key.key,
        })
      ).json<{ data: unknown[]; nextCursor: string }>();
      after = page.nextCursor;
      if (page.data.length === 0) break;
    }
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => void lines.push(line));
    const stand = recording();
    const response = await apiWith(stand.env, `/v2/store/order-events?wait=1&after=${encodeURIComponent(after)}`, {
      key: key.key,
    });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    vi.restoreAllMocks();
    const line = JSON.parse(lines.find((text) => text.includes('"route":"/v2/store/order-events"'))!) as {
      durationMs: number;
      heldMs: number;
    };
    expect(line.heldMs).toBeGreaterThan(0);
    expect(line.heldMs).toBeLessThanOrEqual(line.durationMs);
    expect(stand.named()).toEqual([
      expect.objectContaining({ route: "/v2/store/order-events", durationMs: line.durationMs - line.heldMs }),
    ]);
  });

  it("is written once for each kind of response, with its outcome, route, status class and plan, never the key", async () => {
    await seedOrders([{ id: 1 }, { id: 2, status: "shipped" }]);
    const key = await storeTestKey({ plan: "pro" });
    const tight = await storeTestKey({ plan: "free", limits: { perMinute: 1, perDay: 100 } });
    const cases: [string, (bindings: Env) => Promise<Response>, Record<string, unknown>][] = [
      [
        "list",
        (b) => apiWith(b, "/v1/store/orders", { key: key.key }),
        { route: "/v1/store/orders", method: "GET", statusClass: "2xx", outcome: "admitted", plan: "pro", status: 200 },
      ],
      [
        "cancel",
        (b) => apiWith(b, "/v1/store/orders/1", { key: key.key, method: "DELETE" }),
        { route: "/v1/store/orders/{orderId}", statusClass: "2xx", status: 204 },
      ],
      [
        "conflict",
        (b) => apiWith(b, "/v1/store/orders/2", { key: key.key, method: "DELETE" }),
        { statusClass: "4xx", outcome: "admitted", status: 409 },
      ],
      [
        "no key",
        (b) => apiWith(b, "/v1/store/orders", { key: null, headers: { "CF-Connecting-IP": "198.51.100.7" } }),
        { index: "ip:198.51.100.7", outcome: "unauthenticated", plan: "none", status: 401 },
      ],
      ["unknown path", (b) => apiWith(b, "/v1/nope", { key: key.key }), { route: "unmatched", status: 404 }],
      [
        "limited",
        // Both in one fixed instant: a minute turning between them would admit the second.
        (b) =>
          inOneInstant(async () => {
            await (await apiWith(b, "/v1/store/orders", { key: tight.key })).arrayBuffer();
            return apiWith(b, "/v1/store/orders", { key: tight.key });
          }),
        { outcome: "limited", statusClass: "4xx", status: 429, plan: "free" },
      ],
      [
        "failing D1",
        (b) => apiWith({ ...b, DB: failingD1().db }, "/v1/store/orders/1", { key: key.key, method: "DELETE" }),
        { outcome: "error", statusClass: "5xx", status: 503 },
      ],
      [
        "list from the cache",
        (b) => apiWith(b, "/v1/store/orders", { key: key.key }),
        { route: "/v1/store/orders", status: 200 },
      ],
      [
        "list, HEAD",
        (b) => apiWith(b, "/v1/store/orders", { key: key.key, method: "HEAD" }),
        { method: "HEAD", status: 200 },
      ],
      [
        "v2 page",
        (b) => apiWith(b, "/v2/store/orders?limit=1", { key: key.key }),
        { route: "/v2/store/orders", status: 200 },
      ],
      [
        "at the edge: the data centre from the ray id",
        (b) => apiWith(b, "/v1/store/orders", { key: key.key, headers: { "cf-ray": "0123456789abcdef-LHR" } }),
        { colo: "LHR", status: 200 },
      ],
      ["reference page", (b) => apiWith(b, "/v1/docs", { key: key.key }), { route: "/v1/docs", status: 200 }],
    ];
    for (const [name, send, expected] of cases) {
      const stand = recording();
      const response = await send(stand.env);
      const body = new Uint8Array(await response.arrayBuffer());
      // A streamed list's point is written once its body has ended.
      await vi.waitFor(() => expect(stand.points.length, name).toBeGreaterThan(0), { timeout: 10_000 });
      const points = stand.named();
      const last = points.at(-1)!;
      // The limited case sends twice: one point per request.
      expect(points, name).toHaveLength(name === "limited" ? 2 : 1);
      expect(last, name).toMatchObject({
        version: expect.any(String),
        method: expected.method ?? expect.any(String),
        colo: "local",
        ...expected,
      });
      // What was written, counted by its writer, streamed or not; no body (a 204, a 304, HEAD) is 0.
      expect(last.bytes, name).toBe(body.byteLength);
      expect(last.durationMs, name).toEqual(expect.any(Number));
      expect(last.index, name).toBe(expected.index ?? (name === "limited" ? tight.record.id : key.record.id));
      expect(JSON.stringify(stand.points), name).not.toContain("so_test_");
    }
  });

  it("names the outcome: a 5xx is an error whatever the limiter said, then its refusals, then a 401", () => {
    expect([
      outcomeOf(503, "admitted"),
      outcomeOf(429, "banned"),
      outcomeOf(429, "limited"),
      outcomeOf(401, undefined),
      outcomeOf(401, "admitted"),
      outcomeOf(404, undefined),
    ]).toEqual(["error", "banned", "limited", "unauthenticated", "unauthenticated", "admitted"]);
  });
});

/** The operator's queries in docs/operations.md#request-analytics, each with the comment line that names it. */
function documentedQueries(): Map<string, string> {
  const section = operations.slice(
    operations.indexOf("## Request analytics"),
    operations.indexOf("\n## ", operations.indexOf("## Request analytics") + 1),
  );
  const sql = [...section.matchAll(/```sql\n([\s\S]*?)```/g)].map((match) => match[1]!).join("\n");
  return new Map(
    sql
      .split(/\n(?=-- )/)
      .map((block) => block.trim())
      .filter(Boolean)
      .map((block) => [block.split("\n")[0]!.replace(/^-- /, ""), block.split("\n").slice(1).join("\n")]),
  );
}

describe("the operator's analytics queries", () => {
  it("answer what the Worker wrote: requests and 5xx by version, top accounts today, p99 by route; and the release's health gate reads the same points", async () => {
    await seedOrders([{ id: 11 }, { id: 12, status: "shipped" }, { id: 13 }]);
    const busy = await storeTestKey({ plan: "pro" });
    const quiet = await storeTestKey({ plan: "free" });
    const stand = recording();
    const sends: [Parameters<typeof apiWith>[1], Parameters<typeof apiWith>[2], Env?][] = [
      ["/v1/store/orders", { key: busy.key }],
      ["/v1/store/orders", { key: busy.key }],
      ["/v2/store/orders?limit=1", { key: busy.key }],
      ["/v1/store/orders/12", { key: busy.key, method: "DELETE" }],
      ["/v1/store/orders/13", { key: busy.key, method: "DELETE" }, { ...stand.env, DB: failingD1().db }],
      ["/v1/store/orders", { key: quiet.key }],
      ["/v1/store/orders", { key: null, headers: { "CF-Connecting-IP": "198.51.100.7" } }],
    ];
    for (const [path, init, bindings] of sends) await (await apiWith(bindings ?? stand.env, path, init)).arrayBuffer();
    expect(stand.points).toHaveLength(sends.length);

    // Stamped a millisecond apart on a fixed clock, so "today" and "the last hour" never straddle a boundary.
    const now = Date.UTC(2026, 10, 24, 12, 0, 0);
    const rows = stand.points.map((point, i) => engineRow(point, now - (stand.points.length - i)));
    const named = stand.named();
    const version = named[0]!.version as string;
    const queries = documentedQueries();
    expect([...queries.keys()]).toEqual([
      "Requests and 5xx by version, the last hour",
      "Top accounts (and address groups, operators, partners) by requests today",
      "p99 duration by route, the last hour",
    ]);
    const run = (title: string) => runEngineSql(queries.get(title)!, rows, now).data;

    // As the SQL API answers them: its 64-bit sums quoted (test/support/analytics-engine-sql.ts).
    expect(run("Requests and 5xx by version, the last hour")).toEqual([{ version, requests: "7", errors: "1" }]);
    expect(run("Top accounts (and address groups, operators, partners) by requests today")).toEqual([
      { budget: busy.record.id, requests: "5" },
      { budget: quiet.record.id, requests: "1" },
      { budget: "ip:198.51.100.7", requests: "1" },
    ]);
    const slowest = (route: string) =>
      Math.max(...named.filter((point) => point.route === route).map((point) => point.durationMs as number));
    expect(run("p99 duration by route, the last hour").map((row) => [row.route, row.p99_ms])).toEqual(
      expect.arrayContaining(
        ["/v1/store/orders", "/v2/store/orders", "/v1/store/orders/{orderId}"].map((route) => [route, slowest(route)]),
      ),
    );

    const health = readHealthAnswer(
      runEngineSql(healthQuery("store_orders_requests_local", [version], 60), rows, now),
      [version],
    );
    expect(health.get(version)).toEqual({
      requests: 7,
      errors: 1,
      p99Ms: Math.max(...named.map((point) => point.durationMs as number)),
    });
  });
});
