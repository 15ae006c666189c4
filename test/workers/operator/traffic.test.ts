import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { TRAFFIC_RANGES, readSeries, trafficQueries } from "../../../src/operator/traffic/traffic-queries";
import { engineRow, runEngineSql, tableOf, type EngineRow } from "../../support/analytics-engine-sql";
import { apiWith, errorBodyOf } from "../../support/request";
import { storeTestKey } from "../../support/test-keys";
import { inOneInstant } from "../../support/limits-clock";

/**
 * The operators' traffic view (docs/operations.md#traffic): what the Worker
 * writes to the request analytics, read back through the SQL API. Locally
 * the runtime drops the points, so a recording stand-in keeps them and a
 * stand-in of the SQL API runs the view's queries over them, as the health
 * gate's tests do.
 */
const ACCOUNT = "0123456789abcdef0123456789abcdef";
const DATASET = "store_orders_requests_test";
const READ_TOKEN = "analytics-read-token";
const OPERATOR = { key: null, headers: { Authorization: "Bearer operator-token-for-tests" } };

function analytics() {
  const rows: EngineRow[] = [];
  const dataset: AnalyticsEngineDataset = {
    writeDataPoint: (point) => void rows.push(engineRow(point ?? {}, Date.now())),
  };
  const asked: { url: string; authorization: string | null; sql: string }[] = [];
  let failing = false;
  const realFetch = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    if (!request.url.startsWith("https://api.cloudflare.com/")) return realFetch(input, init);
    const sql = await request.text();
    asked.push({ url: request.url, authorization: request.headers.get("Authorization"), sql });
    if (failing) return new Response("upstream connect error", { status: 502 });
    if (tableOf(sql) !== DATASET) return Response.json({ errors: [`unknown table ${tableOf(sql)}`] }, { status: 422 });
    return Response.json(runEngineSql(sql, rows, Date.now()));
  });
  const bindings = {
    ...env,
    REQUESTS: dataset,
    ANALYTICS_ACCOUNT_ID: ACCOUNT,
    ANALYTICS_DATASET: DATASET,
    ANALYTICS_READ_TOKEN: READ_TOKEN,
  } as Env;
  return { rows, asked, bindings, fail: (on: boolean) => void (failing = on) };
}

afterEach(() => vi.restoreAllMocks());

describe("GET /admin/traffic", () => {
  it("counts every account's and every keyless caller's requests by outcome, with the top accounts, the bans refusing and the address groups refused", () =>
    // One fixed instant: the limited key's one admission a minute stays one, however slowly the requests go.
    inOneInstant(async () => {
      const stand = analytics();
      const busy = await storeTestKey({ plan: "pro" });
      const limited = await storeTestKey({ plan: "free", limits: { perMinute: 1, perDay: 1_000 } });
      for (let i = 0; i < 5; i++) {
        const response = await apiWith(stand.bindings, "/v1/store/orders", { key: busy.key });
        expect(response.status).toBe(200);
        // A list's point is written once its body has been read.
        await response.arrayBuffer();
      }
      // Refused until its object bans it (BAN_THRESHOLD refusals in a row).
      let banned = false;
      for (let i = 0; i < 60 && !banned; i++) {
        const response = await apiWith(stand.bindings, "/v1/store/orders", { key: limited.key });
        banned = response.status === 429 && (await response.json<{ code: string }>()).code === "api_key_banned";
      }
      expect(banned).toBe(true);
      for (let i = 0; i < 3; i++)
        await (
          await apiWith(stand.bindings, "/v1/store/orders", {
            key: "so_test_not_a_key",
            headers: { "CF-Connecting-IP": "198.51.100.9" },
          })
        ).arrayBuffer();

      // What was written, counted here by outcome before the view's own request writes its point.
      const before = [...stand.rows];
      const written = (outcome: string) => before.filter((row) => row.blob5 === outcome).length;
      const response = await apiWith(stand.bindings, "/admin/traffic?range=1h", OPERATOR);
      expect(response.status).toBe(200);
      const traffic = await response.json<{
        range: string;
        bucketSeconds: number;
        series: Record<string, number | string>[];
        topByRequests: { budget: string; requests: number; refused: number }[];
        topByRefusals: { budget: string; requests: number; refused: number }[];
        bans: { caller: string; refused: number; lastRefusedAt: string }[];
        keyless: { addressGroup: string; requests: number; refused: number }[];
        dataset: string;
      }>();

      // The view's series adds up to the same.
      const total = (outcome: string) => traffic.series.reduce((sum, bucket) => sum + Number(bucket[outcome]), 0);
      expect(written("limited")).toBeGreaterThan(0);
      for (const outcome of ["admitted", "limited", "banned", "unauthenticated"])
        expect(total(outcome), outcome).toBe(written(outcome));
      expect(traffic.series).toHaveLength(60);
      expect(traffic.bucketSeconds).toBe(60);

      const limitedRefusals = written("limited") + written("banned");
      expect(traffic.topByRequests).toContainEqual({ budget: busy.record.id, requests: 5, refused: 0 });
      expect(traffic.topByRefusals).toEqual([
        { budget: limited.record.id, requests: limitedRefusals + 1, refused: limitedRefusals },
      ]);
      expect(traffic.bans).toEqual([
        { caller: limited.record.id, refused: written("banned"), lastRefusedAt: expect.any(String) },
      ]);
      // A 401 is not a refusal by the limiter.
      expect(traffic.keyless.find((group) => group.addressGroup === "198.51.100.9")).toBeUndefined();
      expect(traffic.dataset).toBe(DATASET);

      // Five queries to the Cloudflare account's SQL API with the read token, whatever the number of accounts.
      expect(stand.asked).toHaveLength(5);
      for (const asked of stand.asked) {
        expect(asked.url).toBe(`https://api.cloudflare.com/client/v4/accounts/${ACCOUNT}/analytics_engine/sql`);
        expect(asked.authorization).toBe(`Bearer ${READ_TOKEN}`);
      }
    }));

  it("names the address groups whose keyless callers the limiter refused", async () => {
    const stand = analytics();
    // A keyless caller's budget (docs/api.md#rate-limits) is spent well before 200 requests a minute.
    let refused = 0;
    for (let i = 0; i < 200 && refused < 3; i++) {
      const response = await apiWith(stand.bindings, "/v1/store/orders", {
        key: null,
        headers: { "CF-Connecting-IP": "2001:db8:77:88::5" },
      });
      await response.arrayBuffer();
      if (response.status === 429) refused += 1;
    }
    expect(refused).toBe(3);
    const traffic = await (await apiWith(stand.bindings, "/admin/traffic", OPERATOR)).json<{
      keyless: { addressGroup: string; refused: number }[];
    }>();
    expect(traffic.keyless).toContainEqual(
      expect.objectContaining({ addressGroup: "2001:db8:77:88::/64", refused: 3 }),
    );
  });

  it("is 501 traffic_not_configured, naming what is missing, where no account, dataset or read token is set (as locally)", async () => {
    const stand = analytics();
    const { ANALYTICS_READ_TOKEN: _token, ...withoutToken } = stand.bindings;
    const error = await errorBodyOf(await apiWith(withoutToken as Env, "/admin/traffic", OPERATOR));
    expect(error).toMatchObject({ code: "traffic_not_configured", status: 501 });
    expect(error.message).toContain("the ANALYTICS_READ_TOKEN secret");
    const local = await errorBodyOf(await apiWith(env, "/admin/traffic", OPERATOR));
    expect(local.message).toContain(
      "the ANALYTICS_ACCOUNT_ID var and the ANALYTICS_DATASET var and the ANALYTICS_READ_TOKEN secret",
    );
    expect(stand.asked).toHaveLength(0);
  });

  it("is 503 with Retry-After when the SQL API fails, and 400 for a range it does not offer", async () => {
    const stand = analytics();
    stand.fail(true);
    const response = await apiWith(stand.bindings, "/admin/traffic", OPERATOR);
    expect(await errorBodyOf(response)).toMatchObject({ code: "service_unavailable", status: 503 });
    expect(response.headers.get("Retry-After")).not.toBeNull();
    stand.fail(false);
    expect(await errorBodyOf(await apiWith(stand.bindings, "/admin/traffic?range=2h", OPERATOR))).toMatchObject({
      code: "invalid_query",
      status: 400,
    });
    expect(await errorBodyOf(await apiWith(stand.bindings, "/admin/traffic?rnage=1h", OPERATOR))).toMatchObject({
      code: "invalid_query",
      status: 400,
    });
  });

  it("needs an operator: a caller's key is refused", async () => {
    const stand = analytics();
    const key = await storeTestKey({ plan: "business" });
    expect((await apiWith(stand.bindings, "/admin/traffic", { key: key.key })).status).toBe(401);
    expect(stand.asked).toHaveLength(0);
  });
});

describe("the traffic series", () => {
  it("has every bucket of each range, oldest first, the empty ones zero, and drops a point before the first bucket", () => {
    const now = Date.parse("2026-11-27T10:07:30Z");
    for (const range of Object.keys(TRAFFIC_RANGES) as (keyof typeof TRAFFIC_RANGES)[]) {
      const { minutes, bucketMinutes } = TRAFFIC_RANGES[range];
      const series = readSeries({ data: [] }, range, now);
      expect(series, range).toHaveLength(minutes / bucketMinutes);
      expect(Date.parse(series.at(-1)!.start), range).toBeLessThanOrEqual(now);
      expect(now - Date.parse(series.at(-1)!.start), range).toBeLessThan(bucketMinutes * 60_000);
    }
    const last = Date.parse("2026-11-27T10:07:00Z") / 1000;
    const series = readSeries(
      {
        data: [
          { bucket: String(last), outcome: "admitted", requests: "7" },
          { bucket: last - 3600, outcome: "admitted", requests: 9 },
          { bucket: last, outcome: "limited", requests: 2 },
        ],
      },
      "1h",
      now,
    );
    expect(series.at(-1)).toEqual({
      start: "2026-11-27T10:07:00.000Z",
      admitted: 7,
      limited: 2,
      banned: 0,
      unauthenticated: 0,
      error: 0,
    });
    expect(series.reduce((sum, bucket) => sum + bucket.admitted, 0)).toBe(7);
  });

  it("refuses a dataset name that could leave the query, and an answer without numbers", () => {
    expect(() => trafficQueries("x; DROP", "1h")).toThrow(/not a plain name/);
    expect(() => readSeries({ rows: 0 }, "1h", Date.now())).toThrow(/without data/);
    expect(() =>
      readSeries({ data: [{ bucket: "soon", outcome: "admitted", requests: 1 }] }, "1h", Date.now()),
    ).toThrow(/not a number/);
  });
});
